"""Traced control flow: functions traced once into closed sub-graphs, and the `while_loop` and
`cond` equations built from them.

    api.py          fori_loop, while_loop, cond, switch, scan (JAX's names and meanings)
    subtrace.py     a Python function traced into a closed sub-graph
    carry.py        the values a loop or branch passes on: their types (Slot), how types join
                    (NEP 50), and arrays updated in place, carried by reference
    loops.py        a loop body traced into one `while_loop` equation
    branches.py     the branches of an `if` traced into one `cond` (or a `select`)
    loop_writes.py  writes to the user's objects made inside a rolled loop, one row per pass
    forwarding.py   reads of what the pass before wrote, carried instead of read (no copy)
    sinking.py      a write at a place the loop does not move, made once after the loop
    ops.py          what rules of transformations write into: equations with the source line
                    they came from
    batching.py     automatic batching: the batched graph (each equation by its primitive's
                    batching rule); vmap (transform/) and vectorised loops use it
    vectorise.py    a range loop whose passes are independent, run as one batched computation
                    followed by one write per array and one reduction per carried value

The rolling of a user's Python loops into these equations is the frontend's (frontend/
rewrite.py and runtime.py); this layer never reads source code.
"""
