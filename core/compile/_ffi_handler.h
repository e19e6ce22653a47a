/* What every XLA FFI handler of psc_jit's C modules (_blas_calls.c, _host_kernels.c) needs
 * besides its own work: an error to return, and the answer to XLA's question, when a handler
 * is registered, of which FFI version it was built for. */
#ifndef PSC_JIT_FFI_HANDLER_H
#define PSC_JIT_FFI_HANDLER_H

#include <string.h>

#include "xla/ffi/api/c_api.h"

static XLA_FFI_Error *
failure(const XLA_FFI_CallFrame *frame, const char *message)
{
    XLA_FFI_Error_Create_Args args;
    memset(&args, 0, sizeof(args));
    args.struct_size = XLA_FFI_Error_Create_Args_STRUCT_SIZE;
    args.message = message;
    args.errc = XLA_FFI_Error_Code_INVALID_ARGUMENT;
    return frame->api->XLA_FFI_Error_Create(&args);
}

/* Whether this call was XLA's registration-time question (answered), not a run. */
static int
answered_metadata(XLA_FFI_CallFrame *frame)
{
    XLA_FFI_Extension_Base *extension = frame->extension_start;
    if (extension == NULL || extension->type != XLA_FFI_Extension_Metadata) {
        return 0;
    }
    XLA_FFI_Metadata *metadata = ((XLA_FFI_Metadata_Extension *)extension)->metadata;
    metadata->api_version.major_version = XLA_FFI_API_MAJOR;
    metadata->api_version.minor_version = XLA_FFI_API_MINOR;
    metadata->traits = 0;
    return 1;
}

/* Whether this call is a run of the handler (not XLA's registration-time question, which it
 * answers, nor another stage): the handler returns NULL at once when it is not. */
static int
runs(XLA_FFI_CallFrame *frame)
{
    return !answered_metadata(frame) && frame->stage == XLA_FFI_ExecutionStage_EXECUTE;
}

#endif
