"""Tests of core/kernels.py: optimized HLO text -> fusion model."""
from __future__ import annotations

import dataclasses
import re
import subprocess
import sys

import pytest
from psc_jit.core.compile.kernels import FusionModel, Kernel, SourceLine, parse_optimized_hlo

# A real module printed by XLA (jaxlib 0.10.2, CPU) for `e1:mul`, `e2:sin`, `e3:reduce_sum`.
SAMPLE = """\
HloModule cell, is_scheduled=true, entry_computation_layout={(f64[4]{0}, f64[4]{0})->(f64[4]{0}, f64[])}

FileNames
1 "cell_3"

FunctionNames
1 "e3:reduce_sum"
2 "e1:mul"
3 "e2:sin"

FileLocations
1 {file_name_id=1 function_name_id=1 line=6 end_line=6 column=2 end_column=2}
2 {file_name_id=1 function_name_id=2 line=4 end_line=4 column=10 end_column=10}
3 {file_name_id=1 function_name_id=3 line=5 end_line=5 column=2 end_column=2}

StackFrames
1 {file_location_id=1 parent_frame_id=1}
2 {file_location_id=2 parent_frame_id=1}
3 {file_location_id=3 parent_frame_id=1}


%region_0.1 (e3_reduce_sum.3: f64[], e3_reduce_sum.4: f64[]) -> f64[] {
  %e3_reduce_sum.3 = f64[] parameter(0), metadata={op_name="e3:reduce_sum"}
  %e3_reduce_sum.4 = f64[] parameter(1), metadata={op_name="e3:reduce_sum"}
  ROOT %e3_reduce_sum.5 = f64[] add(%e3_reduce_sum.3, %e3_reduce_sum.4), metadata={op_name="e3:reduce_sum" stack_frame_id=1}
}

%fused_computation (param_0.3: f64[4], param_1.2: f64[4]) -> f64[] {
  %param_0.3 = f64[4]{0} parameter(0)
  %param_1.2 = f64[4]{0} parameter(1)
  %e1_mul.0 = f64[4]{0} multiply(%param_0.3, %param_1.2), metadata={op_name="e1:mul" stack_frame_id=2}
  %e2_sin.0 = f64[4]{0} sine(%e1_mul.0), metadata={op_name="e2:sin" stack_frame_id=3}
  %constant.0 = f64[] constant(0)
  ROOT %e3_reduce_sum.0 = f64[] reduce(%e2_sin.0, %constant.0), dimensions={0}, to_apply=%region_0.1, metadata={op_name="e3:reduce_sum" stack_frame_id=1}
}

%fused_computation.1 (param_0.5: f64[4], param_1.3: f64[4]) -> f64[4] {
  %param_0.5 = f64[4]{0} parameter(0)
  %param_1.3 = f64[4]{0} parameter(1)
  %e1_mul.2 = f64[4]{0} multiply(%param_0.5, %param_1.3), metadata={op_name="e1:mul" stack_frame_id=2}
  ROOT %e2_sin.2 = f64[4]{0} sine(%e1_mul.2), metadata={op_name="e2:sin" stack_frame_id=3}
}

ENTRY %main.2 (Arg_0.1: f64[4], Arg_1.1: f64[4]) -> (f64[4], f64[]) {
  %Arg_0.1 = f64[4]{0} parameter(0)
  %Arg_1.1 = f64[4]{0} parameter(1)
  %multiply_sine_fusion = f64[4]{0} fusion(%Arg_0.1, %Arg_1.1), kind=kLoop, calls=%fused_computation.1, metadata={op_name="e2:sin" stack_frame_id=3}
  %sine_reduce_fusion = f64[] fusion(%Arg_0.1, %Arg_1.1), kind=kLoop, calls=%fused_computation, metadata={op_name="e3:reduce_sum" stack_frame_id=1}
  ROOT %tuple.1 = (f64[4]{0}, f64[]) tuple(%multiply_sine_fusion, %sine_reduce_fusion)
}
"""

# Hand-written: an unfused dot, a custom-call, an input fusion with a to_apply region, and a
# while loop whose body holds a fusion; JSON, sharding and frontend attributes with commas,
# braces and quotes inside; a nested stack frame and a second file.
HAND_WHILE_DOT = """\
HloModule hand, is_scheduled=true, entry_computation_layout={(f32[16,32]{1,0}, f32[32,8]{1,0})->(f32[16,8]{1,0}, f32[8]{0})}

FileNames
1 "cell_7"
2 "other.py"

FunctionNames
1 "e10:matmul"

FileLocations
1 {file_name_id=1 function_name_id=1 line=2 end_line=2 column=4 end_column=9}
2 {file_name_id=2 function_name_id=1 line=5 end_line=5 column=1 end_column=1}
3 {file_name_id=1 function_name_id=1 line=6 end_line=6 column=8 end_column=8}
4 {file_name_id=2 function_name_id=1 line=11 end_line=11 column=3 end_column=3}
5 {file_name_id=1 function_name_id=1 line=3 end_line=3 column=2 end_column=2}

StackFrames
1 {file_location_id=1 parent_frame_id=1}
2 {file_location_id=2 parent_frame_id=1}
3 {file_location_id=3 parent_frame_id=2}
4 {file_location_id=4 parent_frame_id=1}
5 {file_location_id=5 parent_frame_id=1}

%add_region (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %sum = f32[] add(%x, %y), metadata={op_name="e12:reduce_sum" stack_frame_id=3}
}

%fused_exp (param_0: f32[8]) -> f32[8] {
  %param_0 = f32[8]{0} parameter(0)
  %constant.9 = f32[] constant(2)
  %broadcast.1 = f32[8]{0} broadcast(%constant.9), dimensions={}
  %e13_mul.1 = f32[8]{0} multiply(%param_0, %broadcast.1), metadata={op_name="e11:while/e13:mul" stack_frame_id=4}
  ROOT %e14_exp.1 = f32[8]{0} exponential(%e13_mul.1), metadata={op_name="e11:while/e14:exp" stack_frame_id=4}
}

%body (state: (s32[], f32[8])) -> (s32[], f32[8]) {
  %state = (s32[], f32[8]{0}) parameter(0)
  %i = s32[] get-tuple-element(%state), index=0
  %v = f32[8]{0} get-tuple-element(%state), index=1
  %one = s32[] constant(1)
  %next_i = s32[] add(%i, %one), metadata={op_name="e11:while/e15:add" stack_frame_id=5}
  %exp_fusion = f32[8]{0} fusion(%v), kind=kLoop, calls=%fused_exp, metadata={op_name="e11:while/e14:exp" stack_frame_id=4}
  ROOT %out = (s32[], f32[8]{0}) tuple(%next_i, %exp_fusion)
}

%cond (state.1: (s32[], f32[8])) -> pred[] {
  %state.1 = (s32[], f32[8]{0}) parameter(0)
  %i.1 = s32[] get-tuple-element(%state.1), index=0
  %limit = s32[] constant(10)
  ROOT %lt = pred[] compare(%i.1, %limit), direction=LT, metadata={op_name="e11:while/e16:lt" stack_frame_id=5}
}

%fused_reduce (param_0.1: f32[16,8]) -> f32[8] {
  %param_0.1 = f32[16,8]{1,0} parameter(0)
  %zero = f32[] constant(0)
  ROOT %e12_reduce_sum.0 = f32[8]{0} reduce(%param_0.1, %zero), dimensions={0}, to_apply=%add_region, metadata={op_name="e12:reduce_sum" stack_frame_id=3}
}

ENTRY %main.9 (p0: f32[16,32], p1: f32[32,8]) -> (f32[16,8], f32[8]) {
  %p0 = f32[16,32]{1,0} parameter(0), sharding={replicated}
  %p1 = f32[32,8]{1,0} parameter(1)
  %dot.3 = f32[16,8]{1,0} dot(%p0, %p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name="e10:matmul" stack_frame_id=1}, backend_config={"outer_dimension_partitions":[],"note":"a, b} = {c \\" )"}
  %custom-call.2 = f32[16,8]{0,1} custom-call(%dot.3), custom_call_target="__onednn$matmul", frontend_attributes={_xla_compute_type="host",note="x,{y"}, sharding={devices=[1,1]0}, metadata={op_name="e17:cholesky" stack_frame_id=2}
  %reduce_fusion = f32[8]{0} fusion(%custom-call.2), kind=kInput, calls=%fused_reduce, metadata={op_name="e12:reduce_sum" stack_frame_id=3}
  %zero_i = s32[] constant(0)
  %init = (s32[], f32[8]{0}) tuple(%zero_i, %reduce_fusion)
  %while.1 = (s32[], f32[8]{0}) while(%init), condition=%cond, body=%body, metadata={op_name="e11:while" stack_frame_id=5}, backend_config={"known_trip_count":{"n":"10"}}
  %result = f32[8]{0} get-tuple-element(%while.1), index=1
  %copy.1 = f32[16,8]{1,0} copy(%custom-call.2)
  ROOT %tuple.2 = (f32[16,8]{1,0}, f32[8]{0}) tuple(%copy.1, %result)
}
"""

# Hand-written: a conditional behind a `call`, operands in the long form (`f32[4]{0} %x`),
# older `source_file`/`source_line` metadata, `/*index=*/` comments, lines that are not HLO.
HAND_CONDITIONAL = """\
HloModule cond_sample

%true_branch (a: f32[4]) -> f32[4] {
  %a = f32[4]{0} parameter(0)
  ROOT %neg = f32[4]{0} negate(f32[4]{0} %a), metadata={op_name="e21:neg" source_file="cell_9" source_line=3}
}

%false_branch (b: f32[4]) -> f32[4] {
  %b = f32[4]{0} parameter(0)
  ROOT %sqrt = f32[4]{0} sqrt(f32[4]{0} %b), metadata={op_name="e22:sqrt" source_file="cell_9" source_line=5}
}

%called (c: pred[], d: f32[4]) -> f32[4] {
  %c = pred[] parameter(0)
  %d = f32[4]{0} parameter(1)
  ROOT %conditional.1 = f32[4]{0} conditional(pred[] %c, f32[4]{0} %d, f32[4]{0} %d), branch_computations={%true_branch, %false_branch}, metadata={op_name="e20:cond" source_file="cell_9" source_line=2}
}

ENTRY %main (p: pred[], x: f32[4]) -> (f32[4], u8[2,3], bf16[4], c64[3]) {
  %p = pred[] parameter(0)
  %x = f32[4]{0} parameter(1)
  this line is not HLO at all
  %call.1 = f32[4]{0} call(pred[] %p, f32[4]{0} %x), to_apply=%called
  %iota.1 = u8[2,3]{1,0} iota(), iota_dimension=0
  %convert.2 = bf16[4]{0} convert(f32[4]{0} %x)
  %slice.3 = f32[3]{0} slice(f32[4]{0} %x), slice={[0:3]}
  %complex.4 = c64[3]{0} complex(%slice.3, %slice.3)
  %broken = f32[4]{0}
  ROOT %t = (f32[4]{0}, u8[2,3]{1,0}, bf16[4]{0}, /*index=3*/c64[3]{0}) tuple(%conditional.1, %iota.1, %convert.2, /*index=3*/%complex.4)
}
"""

def kernel_named(model: FusionModel, name: str) -> Kernel:
    return next(kernel for kernel in model.all_kernels() if kernel.name == name)


def labels_in_text(text: str) -> set[str]:
    """Every equation label the text's op_name metadata mentions (last part of a scope)."""
    return {name.rsplit("/", 1)[-1] for name in re.findall(r'op_name="([^"]*)"', text)}


# ---------------------------------------------------------------- the real sample, verbatim

@pytest.mark.pure
def test_sample_kernels_in_order():
    model = parse_optimized_hlo(SAMPLE)
    assert [k.name for k in model.kernels] == ["multiply_sine_fusion", "sine_reduce_fusion"]
    assert [k.kind for k in model.kernels] == ["loop", "loop"]
    assert [k.shape for k in model.kernels] == ["f64[4]", "f64[]"]


@pytest.mark.pure
def test_sample_fused_ops_leave_out_parameters_and_constants():
    loop, reduce = parse_optimized_hlo(SAMPLE).kernels
    assert loop.fused_ops == ("multiply", "sine")
    assert reduce.fused_ops == ("multiply", "sine", "reduce")


@pytest.mark.pure
def test_sample_labels_in_program_order_including_to_apply_region():
    loop, reduce = parse_optimized_hlo(SAMPLE).kernels
    assert loop.eqn_labels == ("e1:mul", "e2:sin")
    assert reduce.eqn_labels == ("e1:mul", "e2:sin", "e3:reduce_sum")


@pytest.mark.pure
def test_sample_every_label_maps_to_the_kernels_holding_it():
    model = parse_optimized_hlo(SAMPLE)
    assert model.eqn_to_kernels() == {
        "e1:mul": ("multiply_sine_fusion", "sine_reduce_fusion"),
        "e2:sin": ("multiply_sine_fusion", "sine_reduce_fusion"),
        "e3:reduce_sum": ("sine_reduce_fusion",),
    }
    assert set(model.eqn_to_kernels()) == labels_in_text(SAMPLE)


@pytest.mark.pure
def test_sample_source_lines_resolve_through_stack_frames():
    loop, reduce = parse_optimized_hlo(SAMPLE).kernels
    assert loop.source_lines == (SourceLine("cell_3", 4, 10), SourceLine("cell_3", 5, 2))
    assert reduce.source_lines == (
        SourceLine("cell_3", 4, 10), SourceLine("cell_3", 5, 2), SourceLine("cell_3", 6, 2))
    assert parse_optimized_hlo(SAMPLE).line_to_kernels() == {
        ("cell_3", 4): ("multiply_sine_fusion", "sine_reduce_fusion"),
        ("cell_3", 5): ("multiply_sine_fusion", "sine_reduce_fusion"),
        ("cell_3", 6): ("sine_reduce_fusion",),
    }


@pytest.mark.pure
def test_sample_operand_shapes_bytes_and_flops():
    loop, reduce = parse_optimized_hlo(SAMPLE).kernels
    assert loop.operand_shapes == reduce.operand_shapes == ("f64[4]", "f64[4]")
    assert loop.bytes_estimate == 3 * 4 * 8
    assert reduce.bytes_estimate == 2 * 4 * 8 + 8
    # parsed without XLA's cost analysis, flops are estimated from the result's elements
    assert loop.flops == 4 * 2          # 4 elements, multiply and sine
    assert reduce.flops == 1 * 3        # a scalar result, multiply, sine and reduce


@pytest.mark.pure
def test_records_are_frozen_values():
    model = parse_optimized_hlo(SAMPLE)
    assert model == parse_optimized_hlo(SAMPLE)
    with pytest.raises(dataclasses.FrozenInstanceError):
        model.kernels[0].name = "other"


# ------------------------------------------------------- hand-written: while, dot, custom-call

@pytest.mark.pure
def test_hand_entry_kernels_skip_bookkeeping_instructions():
    model = parse_optimized_hlo(HAND_WHILE_DOT)
    assert [(k.name, k.kind) for k in model.kernels] == [
        ("dot.3", "dot"), ("custom-call.2", "custom-call"), ("reduce_fusion", "input"),
        ("while.1", "while"), ("copy.1", "copy")]


@pytest.mark.pure
def test_hand_unfused_kernels_have_their_opcode_as_fused_ops():
    model = parse_optimized_hlo(HAND_WHILE_DOT)
    dot = kernel_named(model, "dot.3")
    assert dot.fused_ops == ("dot",)
    assert dot.eqn_labels == ("e10:matmul",)
    assert dot.operand_shapes == ("f32[16,32]", "f32[32,8]")
    assert dot.bytes_estimate == (16 * 32 + 32 * 8 + 16 * 8) * 4
    assert dot.flops == 16 * 8
    assert kernel_named(model, "custom-call.2").fused_ops == ("custom-call",)


@pytest.mark.pure
def test_hand_attributes_with_braces_commas_and_quotes_do_not_confuse_the_parser():
    custom_call = kernel_named(parse_optimized_hlo(HAND_WHILE_DOT), "custom-call.2")
    assert custom_call.shape == "f32[16,8]"
    assert custom_call.operand_shapes == ("f32[16,8]",)
    assert custom_call.eqn_labels == ("e17:cholesky",)
    assert custom_call.source_lines == (SourceLine("other.py", 5, 1),)


@pytest.mark.pure
def test_hand_nested_stack_frame_resolves_to_its_own_location():
    reduce = kernel_named(parse_optimized_hlo(HAND_WHILE_DOT), "reduce_fusion")
    assert reduce.fused_ops == ("reduce",)
    assert reduce.source_lines == (SourceLine("cell_7", 6, 8),)


@pytest.mark.pure
def test_hand_while_body_holds_condition_and_body_kernels():
    loop = kernel_named(parse_optimized_hlo(HAND_WHILE_DOT), "while.1")
    assert loop.shape == "(s32[], f32[8])"
    assert loop.operand_shapes == ("(s32[], f32[8])",)
    assert [(k.name, k.kind) for k in loop.body] == [
        ("lt", "compare"), ("next_i", "add"), ("exp_fusion", "loop")]
    assert loop.body[2].fused_ops == ("broadcast", "multiply", "exponential")
    assert loop.fused_ops == ("while",)
    assert loop.flops == 10 * (1 + 1 + 8 * 2)      # its body, ten times (known_trip_count)


@pytest.mark.pure
def test_hand_while_labels_are_unscoped_and_include_everything_inside():
    model = parse_optimized_hlo(HAND_WHILE_DOT)
    loop = kernel_named(model, "while.1")
    assert loop.eqn_labels == ("e16:lt", "e15:add", "e13:mul", "e14:exp", "e11:while")
    assert model.eqn_to_kernels()["e14:exp"] == ("while.1", "exp_fusion")
    assert model.eqn_to_kernels()["e11:while"] == ("while.1",)
    assert set(model.eqn_to_kernels()) == labels_in_text(HAND_WHILE_DOT)


@pytest.mark.pure
def test_hand_line_to_kernels_spans_files_and_nested_bodies():
    model = parse_optimized_hlo(HAND_WHILE_DOT)
    lines = model.line_to_kernels()
    assert lines[("other.py", 11)] == ("while.1", "exp_fusion")
    assert lines[("cell_7", 3)] == ("while.1", "lt", "next_i")
    assert lines[("cell_7", 2)] == ("dot.3",)
    assert kernel_named(model, "while.1").source_lines == (
        SourceLine("cell_7", 3, 2), SourceLine("other.py", 11, 3))


@pytest.mark.pure
def test_all_kernels_walks_bodies_depth_first():
    names = [k.name for k in parse_optimized_hlo(HAND_WHILE_DOT).all_kernels()]
    assert names == ["dot.3", "custom-call.2", "reduce_fusion", "while.1", "lt", "next_i",
                     "exp_fusion", "copy.1"]


# ------------------------------------------------ hand-written: conditional behind a call

@pytest.mark.pure
def test_call_is_seen_through_and_conditional_has_branch_bodies():
    model = parse_optimized_hlo(HAND_CONDITIONAL)
    assert [k.name for k in model.kernels] == [
        "conditional.1", "iota.1", "convert.2", "slice.3", "complex.4"]
    conditional = model.kernels[0]
    assert conditional.kind == "conditional"
    assert [k.name for k in conditional.body] == ["neg", "sqrt"]
    assert conditional.eqn_labels == ("e21:neg", "e22:sqrt", "e20:cond")


@pytest.mark.pure
def test_long_form_operands_and_source_file_metadata():
    conditional = parse_optimized_hlo(HAND_CONDITIONAL).kernels[0]
    assert conditional.operand_shapes == ("pred[]", "f32[4]", "f32[4]")
    assert conditional.bytes_estimate == 1 + 2 * 16 + 16
    assert conditional.flops == 4 + 4            # every branch once
    assert conditional.source_lines == (
        SourceLine("cell_9", 2, 0), SourceLine("cell_9", 3, 0), SourceLine("cell_9", 5, 0))


@pytest.mark.pure
def test_element_sizes_of_small_and_complex_types():
    model = parse_optimized_hlo(HAND_CONDITIONAL)
    assert kernel_named(model, "iota.1").bytes_estimate == 6                  # u8[2,3]
    assert kernel_named(model, "convert.2").bytes_estimate == 4 * 2 + 4 * 4   # bf16 from f32
    assert kernel_named(model, "complex.4").bytes_estimate == 3 * 8 + 2 * 3 * 4


# ---------------------------------------------------------------------------- robustness

@pytest.mark.pure
@pytest.mark.parametrize("text", [SAMPLE, HAND_WHILE_DOT, HAND_CONDITIONAL])
def test_every_prefix_of_a_module_parses_without_raising(text):
    for end in range(0, len(text), 7):
        assert isinstance(parse_optimized_hlo(text[:end]), FusionModel)


@pytest.mark.pure
@pytest.mark.parametrize("text", ["", "not hlo\n}\n{", "ENTRY %e {\n  %a = (f32[ x(\n}",
                                  "ENTRY %e {\n  %a = f32[3 cosine(%b)\n}"])
def test_garbage_gives_no_kernels(text):
    assert parse_optimized_hlo(text) == FusionModel(())


@pytest.mark.pure
def test_dangling_references_give_what_was_understood():
    text = ("StackFrames\n1 {file_location_id=9}\n\nENTRY %e () -> f32[2] {\n"
            '  %c = f32[2]{0} fusion(%q), kind=kLoop, calls=%gone, metadata={op_name="e5:cos" '
            "stack_frame_id=1}\n}\n")
    (kernel,) = parse_optimized_hlo(text).kernels
    assert (kernel.name, kernel.kind, kernel.fused_ops) == ("c", "loop", ())
    assert kernel.eqn_labels == ("e5:cos",)
    assert kernel.source_lines == kernel.operand_shapes == ()


@pytest.mark.pure
def test_unclosed_entry_still_yields_its_kernels():
    model = parse_optimized_hlo(SAMPLE.rstrip().removesuffix("}"))
    assert [k.name for k in model.kernels] == ["multiply_sine_fusion", "sine_reduce_fusion"]


@pytest.mark.pure
def test_kernels_module_imports_without_jaxlib_ipython_widgets_or_graphviz():
    blocked = ["jaxlib", "IPython", "ipywidgets", "graphviz"]
    code = (f"import sys\nfor name in {blocked!r}: sys.modules[name] = None\n"
            "import psc_jit.core.compile.kernels\n"
            f"assert not any(name in sys.modules and sys.modules[name] for name in {blocked!r})")
    subprocess.run([sys.executable, "-c", code], check=True)


# ------------------------------------------------------------- real modules from jaxlib

DOT_TANH = """module @m {
  func.func public @main(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %0 = "stablehlo.dot_general"(%a, %b) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32> loc("e0:dot_general"("cell_1":2:5))
    %1 = "stablehlo.tanh"(%0) : (tensor<8x8xf32>) -> tensor<8x8xf32> loc("e1:tanh"("cell_1":3:1))
    "func.return"(%1) : (tensor<8x8xf32>) -> ()
  }
}"""

WHILE_LOOP = """module @m {
  func.func public @main(%x: tensor<10xf64>) -> (tensor<i64>, tensor<10xf64>) {
    %c0 = "stablehlo.constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64> loc("e0:const"("cell_2":1:1))
    %r:2 = "stablehlo.while"(%c0, %x) ({
    ^bb0(%i: tensor<i64>, %acc: tensor<10xf64>):
      %lim = "stablehlo.constant"() {value = dense<5> : tensor<i64>} : () -> tensor<i64> loc("e1:const"("cell_2":2:1))
      %p = "stablehlo.compare"(%i, %lim) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<i64>, tensor<i64>) -> tensor<i1> loc("e2:lt"("cell_2":2:5))
      "stablehlo.return"(%p) : (tensor<i1>) -> ()
    }, {
    ^bb0(%i: tensor<i64>, %acc: tensor<10xf64>):
      %one = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64> loc("e3:const"("cell_2":3:1))
      %i2 = "stablehlo.add"(%i, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64> loc("e4:add"("cell_2":3:5))
      %s = "stablehlo.sine"(%acc) : (tensor<10xf64>) -> tensor<10xf64> loc("e5:sin"("cell_2":4:7))
      %m = "stablehlo.multiply"(%s, %acc) : (tensor<10xf64>, tensor<10xf64>) -> tensor<10xf64> loc("e6:mul"("cell_2":4:3))
      "stablehlo.return"(%i2, %m) : (tensor<i64>, tensor<10xf64>) -> ()
    }) : (tensor<i64>, tensor<10xf64>) -> (tensor<i64>, tensor<10xf64>) loc("e7:while"("cell_2":2:1))
    "func.return"(%r#0, %r#1) : (tensor<i64>, tensor<10xf64>) -> ()
  }
}"""


def optimized_hlo(stablehlo_text: str) -> str:
    """Compile StableHLO text on the CPU client and return XLA's optimized HLO text."""
    xla_client = pytest.importorskip("jaxlib.xla_client")
    import jaxlib._jax as jax_ext

    client = xla_client.make_cpu_client()
    devices = jax_ext.DeviceList((client.devices()[0],))
    executable = client.compile_and_load(stablehlo_text.encode(), devices,
                                         xla_client.CompileOptions())
    return executable.hlo_modules()[0].to_string()


@pytest.mark.xla
def test_real_dot_and_tanh_map_to_their_lines():
    text = optimized_hlo(DOT_TANH)
    model = parse_optimized_hlo(text)
    assert len(model.kernels) == 2
    dot, tanh = model.kernels
    assert "dot" in dot.fused_ops and dot.eqn_labels == ("e0:dot_general",)
    assert tanh.fused_ops == ("tanh",) and tanh.eqn_labels == ("e1:tanh",)
    assert dot.source_lines == (SourceLine("cell_1", 2, 5),)
    assert model.line_to_kernels() == {("cell_1", 2): (dot.name,), ("cell_1", 3): (tanh.name,)}
    assert tanh.operand_shapes == ("f32[8,8]",) and tanh.bytes_estimate == 2 * 64 * 4
    assert dot.operand_shapes == ("f32[8,8]", "f32[8,8]")
    assert set(model.eqn_to_kernels()) == labels_in_text(text)


@pytest.mark.xla
def test_real_while_loop_kernel_has_a_body():
    text = optimized_hlo(WHILE_LOOP)
    model = parse_optimized_hlo(text)
    loops = [k for k in model.all_kernels() if k.kind == "while"]
    assert len(loops) == 1
    loop = loops[0]
    assert loop.shape == "(s64[], f64[10])" and loop.body
    assert {"e2:lt", "e4:add", "e5:sin", "e6:mul", "e7:while"} <= set(loop.eqn_labels)
    eqn_to_kernels = model.eqn_to_kernels()
    body_names = {k.name for k in loop.body}
    for label in ("e2:lt", "e4:add", "e5:sin", "e6:mul"):
        assert eqn_to_kernels[label][0] == loop.name
        assert set(eqn_to_kernels[label][1:]) <= body_names and eqn_to_kernels[label][1:]
    assert set(eqn_to_kernels) == labels_in_text(text)
    assert model.line_to_kernels()[("cell_2", 4)][0] == loop.name


@pytest.mark.pure
def test_merged_op_names_map_to_every_equation():
    text = SAMPLE.replace('op_name="e2:sin" stack_frame_id=3}', 'op_name="e2:sin;e1:mul" stack_frame_id=3}')
    model = parse_optimized_hlo(text)
    assert "e1:mul" in model.eqn_to_kernels() and "e2:sin" in model.eqn_to_kernels()
    assert not any(";" in label for k in model.all_kernels() for label in k.eqn_labels)
