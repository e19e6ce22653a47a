"""The Python frontend: from the code a user wrote (a notebook cell, a jitted function and the
functions it calls) to something the tracer can run, and what a cached program may assume.

Modules, in the order a cell meets them:

    cell.py            a cell as a function: its inputs, outputs, last expression; the calls
                       in its source that cannot be compiled (the static PSC check)
    convert.py         a function recompiled from its source for tracing: reads made visible,
                       returns gathered, loops and branches rolled
    definitions.py     the functions and classes a cell defines: the plain ones, made anew
                       from recipes on every run
    regions.py         a cell cut into compiled regions around its host steps: the plan
                       (with hoist.py: a draw taken out of its statement, the rest compiled;
                       predraw.py: a loop's draws made before it, so that it rolls;
                       printed.py: a print's values computed in the region before it, where
                       exactness.py finds them NumPy's bits; shown.py: the names a print
                       reads, which a region may compute only with NumPy's bits too)
    rewrite.py         loop rolling, the AST pass (with rewrite_expressions.py, blockers.py,
                       scopes.py, creation_calls.py)
    runtime.py         loop rolling, the helpers rewritten code calls at trace time (with
                       python_scalars.py, python_types.py, raising.py, unrolled.py)
    reads.py           what a trace reads from outside its arguments (with sources.py,
                       seen.py, static_numbers.py, read_containers.py)
    host_calls.py      calls whose result or effect changes between runs (files, clocks,
                       the environment, global settings), told one call at a time
    subclasses.py      calls that make a value of a subclass of ndarray (np.ma.array, ...)
    refusals.py        refusals that stand even when traced code catches them; the audit
                       events of host calls made inside libraries (with _audit_events.c)
    effects.py         the trace's effects on the caller's Python objects (with sinks.py,
                       helper_sinks.py, and contents.py: the items of containers, kept
                       and put back)

Words used throughout:

    read        a value traced code takes from outside its arguments: a global, a closure
                cell, an attribute or an item (`reads.Recorder.read`).
    source      how to fetch a read value again on a re-run: a root and attribute/item
                steps (`sources.Source`).
    guard       a static value read that way (an int, a function, a module), checked
                before every re-run; a changed one is a cache miss that names it
                (`sources.Guard`).
    implicit input
                an array or float read that way, made an input of the program, so a new
                value is a new argument, not a stale constant (`sources.ImplicitInput`).
    seen        what traced code takes without naming it (a partial's arguments, a
                function's defaults, `vars(obj)`), read as any other read (`seen.py`).
    sink        a Python object the code only writes to (`L.append(v)`, `d[k] = v`,
                `obj.a = v`): the writes are recorded while tracing and made again after
                every run with that run's values (`effects.Sink`).
    effect      any change to a Python object; one that is not a sink's write is refused
                at its line, and the cell runs as plain Python.
    carry       a value a rolled loop passes from one pass to the next, by value (a name
                it rebinds) or by reference (an array it updates in place): see
                `control.carry`.
    twin        the closure a cell's `def` makes while traced (it reads the cell's values);
                never bound in the notebook (`definitions`).
    recipe      what makes a cell's function, class or instance anew on every run: a node
                of the result, its children what the definition evaluated (`definitions`).
    rolled      a Python loop or `if` turned into one XLA loop or conditional at trace
                time; unrolled when it cannot be, within the budget.
    region      a run of a cell's statements compiled as one XLA program.
    host call   a call whose result or effect can change between runs with equal inputs
                (a file read, the clock, os.environ, np.set_printoptions): traced, it would
                run once; found while tracing and refused at its line
                (`host_calls.host_call_reason`), until it can become a host step.
    host step   a statement of a cell that runs as plain Python between regions (a print,
                a random draw, an operation whose result shape depends on data); a draw
                inside a statement is a host step of its own, made just before the region
                that computes the rest (`hoist.Hoist`).
    pre-draw    a rolled loop's draws made once before it, for every pass
                (`predraw.PreDraw`).

This layer sits above control/ (the traced control flow it rolls loops into) and below
compile/ (jit, which calls it to convert and to record reads).
"""
