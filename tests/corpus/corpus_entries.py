"""A corpus of notebook cells as people write them, run plain against `%%psc_jit`.

What it is
----------
`ENTRIES` holds short notebook sessions: a setup (run as plain Python first, it gives the
inputs), then one or more cells run in order, some twice (a re-run: the cache is hit, or the
numbers drawn change). The cells are written the way NumPy exercises and small analyses are
written in notebooks: prints of arrays, shapes and formatted floats, seeded and unseeded
random draws (`np.random.*`, `default_rng`, `RandomState`), helpers defined in a cell and
called, selections whose size depends on the data, loops with prints inside, in-place
updates, reductions, linear algebra, `from numpy import *`, line magics, `display`, files,
cells that raise (the user's own errors and NumPy's) and cells that read what an earlier cell
left. They were written as a user would write them, without looking at what psc_jit compiles:
add cells the same way, never choose or edit one by whether it compiles.

Each cell gets tags (`Entry.tags`), read from its source (print, random, helper, ...; see
TAGS), so the summary can say which habits compile and which fall back.

How it runs
-----------
`corpus_harness.py` runs each entry twice in worker processes holding a real IPython shell
with `%load_ext psc_jit`: once plain, once with `%%psc_jit --quiet --no-compare` on top of
each cell, and compares after every cell: every name (type, dtype, shape, values; floats
exactly, last-bit differences counted apart), the printed text byte for byte, the global
NumPy random state and every generator's state, which arrays share memory, and the exception
(type and message). `test_corpus.py` fails on any cell that ends differently;
`report.py` prints how many compile whole, split into regions, or run plain, and why:

    .venv/bin/python tests/corpus/report.py [--tag random] [--entry NAME] [--details]

Printed text is compared as printed, with two things no two plain runs share either
normalised: the timings `%timeit` and `%time` print, and memory addresses (`at 0x7f...`).
Names whose values differ from run to run (a clock read) are listed in `Entry.varies` and not
compared.
"""
from corpus_cells import entry, raising, twice

NP = "import numpy as np"

BASICS = (
    entry("array_basics", NP, """
        a = np.arange(12).reshape(3, 4)
        print(a)
        print(a.shape, a.ndim, a.dtype)
        """, twice("""
        b = a.T @ a
        print(f"b has shape {b.shape} and trace {np.trace(b)}")
        b
        """)),
    entry("zeros_and_reversal", NP, """
        Z = np.zeros(10)
        Z[4] = 1
        print(Z)
        print("%d bytes" % (Z.size * Z.itemsize))
        """, """
        Z = np.arange(10, 50)
        Z = Z[::-1]
        print(Z[:5], "...", Z[-3:])
        """),
    entry("checkerboard", NP, """
        Z = np.zeros((8, 8), dtype=int)
        Z[1::2, ::2] = 1
        Z[::2, 1::2] = 1
        print(Z)
        """, """
        print(Z.sum(), "black squares")
        T = np.tile(np.array([[0, 1], [1, 0]]), (4, 4))
        print((T == Z).all())
        """),
    entry("border_and_padding", NP, """
        Z = np.ones((5, 5))
        Z[1:-1, 1:-1] = 0
        Z
        """, """
        Z = np.pad(Z, pad_width=1, mode='constant', constant_values=0)
        print(Z.shape)
        print(Z)
        """),
    entry("diagonals", NP, """
        D = np.diag(1 + np.arange(4), k=-1)
        print(D)
        I = np.eye(3)
        print(I @ np.arange(3))
        """),
    entry("float_formatting", "import numpy as np\nx = np.linspace(0, 1, 5)", """
        for v in x:
            print(f"{v:.2f} -> {v**2:8.4f}")
        """, """
        print("mean: {:.3f}, max: {:.1e}".format(x.mean(), x.max()))
        print("sum = %.4f" % x.sum())
        print(repr(x.sum()), str(x[1]))
        """),
    entry("print_options", NP, """
        np.set_printoptions(precision=3, suppress=True)
        A = np.linspace(0, 1, 7) / 3
        print(A)
        """, """
        with np.printoptions(precision=1):
            print(A * 1000)
        print(np.array2string(A, separator=', '))
        """),
    entry("dtype_limits", NP, """
        for dtype in [np.int8, np.int32, np.int64]:
            print(np.iinfo(dtype).min, np.iinfo(dtype).max)
        for dtype in [np.float32, np.float64]:
            print(np.finfo(dtype).eps)
        """, """
        x = np.arange(10, dtype=np.float32)
        y = x.astype(np.int32, copy=False)
        print(y.dtype, y)
        """),
    entry("nan_and_overflow_facts", NP, """
        print(0 * np.nan)
        print(np.nan == np.nan)
        print(np.inf > np.nan)
        print(np.nan - np.nan)
        print(0.3 == 3 * 0.1)
        """, """
        a = np.array([127], dtype=np.int8)
        print(a + 1)
        print(np.array([2**31 - 1], dtype=np.int32) * 2)
        """),
)

RANDOM = (
    entry("seeded_rand_plus_normal", NP, twice("""
        np.random.seed(0)
        a = np.random.rand(3)
        b = a + np.random.normal(size=3)
        print(a)
        print(b)
        """)),
    entry("normal_sample_stats", "import numpy as np\nnp.random.seed(1)", """
        data = np.random.normal(loc=5.0, scale=2.0, size=1000)
        mu, sigma = data.mean(), data.std()
        print(f"mean={mu:.3f} std={sigma:.3f}")
        z = (data - mu) / sigma
        """, """
        outliers = data[np.abs(z) > 2]
        print(len(outliers), "outliers")
        outliers.round(2)[:5]
        """),
    entry("default_rng_covariance", "import numpy as np\nrng = np.random.default_rng(0)", twice("""
        samples = rng.standard_normal((4, 3))
        cov = np.cov(samples, rowvar=False)
        print(cov.round(3))
        """)),
    entry("dice_rolls", NP, """
        rng = np.random.default_rng(7)
        rolls = rng.integers(1, 7, size=600)
        counts = np.bincount(rolls, minlength=7)[1:]
        for face, c in zip(range(1, 7), counts):
            print(face, c)
        """, """
        picks = rng.choice(10, size=4, replace=False)
        print(picks)
        """),
    entry("legacy_random_state", NP, """
        rs = np.random.RandomState(123)
        w = rs.randn(3, 3)
        w_sym = (w + w.T) / 2
        eigvals = np.linalg.eigvalsh(w_sym)
        print(eigvals)
        """, """
        x = rs.uniform(-1, 1, size=5)
        print(rs.randint(0, 10, size=3), x.round(3))
        """),
    entry("shuffle_train_test", NP, """
        np.random.seed(1)
        idx = np.arange(10)
        np.random.shuffle(idx)
        perm = np.random.permutation(10)
        print(idx, perm)
        train, test = idx[:7], idx[7:]
        """, """
        X = np.arange(20).reshape(10, 2)
        X_train, X_test = X[train], X[test]
        print(X_train.shape, X_test.shape)
        """),
    entry("monte_carlo_pi", NP, """
        np.random.seed(123)
        n = 10000
        pts = np.random.rand(n, 2)
        inside = (pts ** 2).sum(axis=1) <= 1.0
        pi_est = 4 * inside.mean()
        print(f"pi ~ {pi_est:.4f}")
        """, """
        for n in [100, 1000, 10000]:
            p = np.random.rand(n, 2)
            est = 4 * np.mean(np.sum(p**2, axis=1) <= 1)
            print(n, est, abs(est - np.pi))
        """),
    entry("random_walk", NP, """
        np.random.seed(12)
        steps = np.random.choice([-1, 1], size=1000)
        walk = np.cumsum(steps)
        print(walk.min(), walk.max())
        """, """
        first_crossing = (np.abs(walk) >= 10).argmax()
        print("first crossing at step", first_crossing)
        walk[first_crossing]
        """),
    entry("bootstrap_ci", """
        import numpy as np
        rng = np.random.default_rng(2024)
        data = rng.exponential(scale=2.0, size=50)
        """, """
        means = []
        for _ in range(200):
            sample = rng.choice(data, size=data.size, replace=True)
            means.append(sample.mean())
        means = np.array(means)
        lo, hi = np.percentile(means, [2.5, 97.5])
        print(f"95% CI: [{lo:.3f}, {hi:.3f}]")
        """),
    entry("draws_in_a_loop", "import numpy as np\nrng = np.random.default_rng(5)", """
        for i in range(4):
            x = rng.normal(size=3)
            print(i, x.round(2), x.sum())
        """, twice("""
        y = rng.random(3)
        print(y)
        """)),
    entry("noisy_observations", """
        import numpy as np
        rng = np.random.default_rng(1)
        t = np.linspace(0, 1, 20)
        """, """
        def noisy(y, rng, sigma=0.1):
            return y + rng.normal(0, sigma, size=y.shape)

        clean = np.sin(2 * np.pi * t)
        obs = noisy(clean, rng)
        resid = obs - clean
        print(resid.std())
        """, twice("""
        obs2 = noisy(clean, rng, sigma=0.5)
        print(np.abs(obs2 - clean).max() > np.abs(resid).max())
        """)),
    entry("legacy_distributions", NP, """
        np.random.seed(3)
        u = np.random.uniform(-1, 1, size=(3, 2))
        p = np.random.poisson(lam=4, size=6)
        b = np.random.binomial(n=10, p=0.3, size=6)
        e = np.random.exponential(1.5, size=4)
        print(u)
        print(p, b)
        e.round(3)
        """),
    entry("random_matrix_extremes", NP, """
        np.random.seed(8)
        Z = np.random.random((5, 5))
        Zmin, Zmax = Z.min(), Z.max()
        print(Zmin, Zmax)
        """, """
        Z = np.random.randint(0, 10, (3, 3))
        print(Z)
        print(np.random.random_sample())
        """),
    entry("correlated_pairs", NP, """
        rng = np.random.default_rng(11)
        mean = [0, 0]
        cov = [[1, 0.8], [0.8, 1]]
        xy = rng.multivariate_normal(mean, cov, size=500)
        print(np.corrcoef(xy.T)[0, 1])
        """),
    entry("deal_cards", NP, """
        rng = np.random.default_rng(3)
        deck = np.arange(52)
        rng.shuffle(deck)
        hand = deck[:5]
        print(sorted(hand))
        perm = rng.permutation(10)
        perm
        """),
    entry("unseeded_noise", NP, twice("""
        noise = np.random.randn(4, 4)
        print(noise.shape)
        signal = np.ones((4, 4)) + 0.1 * noise
        signal.mean()
        """)),
    entry("standardize_columns", NP, """
        rng = np.random.default_rng(42)
        X = rng.standard_normal((100, 3)) * [1.0, 5.0, 0.2] + [0.0, 10.0, -3.0]
        Xs = (X - X.mean(axis=0)) / X.std(axis=0)
        for j in range(X.shape[1]):
            print(f"col {j}: mean {Xs[:, j].mean():+.2e} std {Xs[:, j].std():.3f}")
        """),
    entry("coin_flips", NP, """
        np.random.seed(99)
        flips = np.random.rand(50) < 0.5
        heads = flips.sum()
        print("heads:", heads, "tails:", len(flips) - heads)
        """, """
        runs = np.diff(np.flatnonzero(np.diff(np.r_[-1, flips.astype(int), -1]) != 0))
        print("longest run:", runs.max())
        """),
)

HELPERS = (
    entry("normalize_helper", NP, """
        def normalize(v):
            return (v - v.min()) / (v.max() - v.min())

        x = np.linspace(-3, 3, 7)
        nx = normalize(x)
        nx
        """, """
        print(normalize(x ** 2))
        """),
    entry("softmax_and_loss", NP, """
        def softmax(z):
            e = np.exp(z - z.max())
            return e / e.sum()

        logits = np.array([2.0, 1.0, 0.1])
        p = softmax(logits)
        print(p, p.sum())
        """, """
        def cross_entropy(p, label):
            return -np.log(p[label])

        loss = cross_entropy(p, 0)
        print(f"loss = {loss:.4f}")
        """),
    entry("shift_step_helper", "import numpy as np\nZ = np.arange(10.0)", """
        def step(Z):
            Z[1:] = Z[:-1]
            return Z
        """, twice("""
        for _ in range(100):
            Z = step(Z)
        print(Z)
        """)),
    entry("diffusion_step_helper", """
        import numpy as np
        u = np.zeros(21)
        u[10] = 1.0
        """, """
        def step(u, alpha=0.25):
            u[1:-1] = u[1:-1] + alpha * (u[2:] - 2 * u[1:-1] + u[:-2])
            return u

        for _ in range(100):
            u = step(u)
        print(u.round(4))
        """, twice("""
        for _ in range(100):
            u = step(u)
        print(u.sum(), u.max())
        """)),
    entry("game_of_life", "import numpy as np\nnp.random.seed(0)", """
        def iterate(Z):
            N = (Z[0:-2, 0:-2] + Z[0:-2, 1:-1] + Z[0:-2, 2:] +
                 Z[1:-1, 0:-2]                + Z[1:-1, 2:] +
                 Z[2:  , 0:-2] + Z[2:  , 1:-1] + Z[2:  , 2:])
            birth = (N == 3) & (Z[1:-1, 1:-1] == 0)
            survive = ((N == 2) | (N == 3)) & (Z[1:-1, 1:-1] == 1)
            Z[...] = 0
            Z[1:-1, 1:-1][birth | survive] = 1
            return Z
        """, """
        Z = np.random.randint(0, 2, (20, 20))
        for i in range(50):
            Z = iterate(Z)
        print(Z.sum())
        print(Z[:5, :10])
        """),
    entry("newton_root", NP, """
        def f(x):
            return x**3 - 2*x - 5

        def df(x):
            return 3*x**2 - 2

        x = 2.0
        it = 0
        while abs(f(x)) > 1e-12 and it < 50:
            x = x - f(x) / df(x)
            it += 1
        print(f"root {x:.12f} after {it} iterations")
        """, """
        xs = np.linspace(1.5, 2.5, 5)
        for _ in range(6):
            xs = xs - f(xs) / df(xs)
        print(xs)
        """),
    entry("lambdas_and_vectorize", NP, """
        f = lambda x: x**2 - 1
        xs = np.linspace(-2, 2, 9)
        print(f(xs))
        vsign = np.vectorize(lambda v: 1 if v > 0 else (-1 if v < 0 else 0))
        print(vsign(xs))
        """),
    entry("apply_along_rows", NP, """
        M = np.arange(12).reshape(3, 4)
        def spread(row):
            return row.max() - row.min()
        print(np.apply_along_axis(spread, 1, M))
        """),
    entry("closure_scaler", NP, """
        def make_scaler(k):
            def scale(v):
                return v * k
            return scale

        double = make_scaler(2)
        triple = make_scaler(3.0)
        print(double(np.arange(3)), triple(np.arange(3)))
        """),
    entry("safe_log_helper", NP, """
        def safe_log(x):
            if np.any(x <= 0):
                raise ValueError("safe_log needs positive values")
            return np.log(x)

        print(safe_log(np.array([1.0, np.e])))
        """, raising("""
        y = safe_log(np.array([1.0, -1.0]))
        """)),
    entry("from_function", NP, """
        Z = np.fromfunction(lambda i, j: (i + 1) * (j + 1), (4, 4), dtype=int)
        print(Z)
        """),
    entry("center_in_place_helper", "import numpy as np\nnp.random.seed(6)", """
        def center(X):
            X -= X.mean(axis=0)
            return X

        X = np.random.rand(6, 3)
        for _ in range(3):
            X = center(X)
        print(np.abs(X.mean(axis=0)).max() < 1e-12)
        """),
    entry("helper_with_print", NP, """
        def report(name, arr):
            print(f"{name}: shape={arr.shape} mean={arr.mean():.3f} min={arr.min()} "
                  f"max={arr.max()}")
            return arr.mean()

        a = np.arange(10.0)
        m1 = report("a", a)
        m2 = report("a squared", a ** 2)
        """, twice("""
        b = a * 2 - m1
        m3 = report("b", b)
        """)),
    entry("moving_average_helper", NP, """
        def moving_average(a, n=3):
            ret = np.cumsum(a, dtype=float)
            ret[n:] = ret[n:] - ret[:-n]
            return ret[n - 1:] / n

        Z = np.arange(20)
        print(moving_average(Z, n=3))
        """, """
        print(np.convolve(Z, np.ones(3) / 3, mode='valid'))
        """),
)

DATA_DEPENDENT = (
    entry("positive_elements", NP, """
        x = np.array([3, -1, 4, -1, 5, -9, 2, 6])
        pos = x[x > 0]
        print(pos, pos.sum())
        """, """
        vals, counts = np.unique(x, return_counts=True)
        for v, c in zip(vals, counts):
            print(v, c)
        """),
    entry("nonzero_and_argwhere", NP, """
        Z = np.array([1, 2, 0, 0, 4, 0])
        nz = np.nonzero(Z)
        print(nz)
        M = np.array([[0, 1], [2, 0]])
        print(np.argwhere(M))
        """),
    entry("set_operations", "import numpy as np\nnp.random.seed(4)", """
        Z1 = np.random.randint(0, 10, 10)
        Z2 = np.random.randint(0, 10, 10)
        common = np.intersect1d(Z1, Z2)
        print(common)
        """, """
        only1 = np.setdiff1d(Z1, Z2)
        both = np.union1d(Z1, Z2)
        print(len(only1), len(both))
        """),
    entry("vote_count", NP, """
        votes = np.array([2, 0, 2, 1, 2, 3, 1])
        counts = np.bincount(votes)
        winner = counts.argmax()
        print(counts, "winner:", winner)
        """),
    entry("missing_values", NP, """
        x = np.array([1.0, np.nan, 3.0, np.nan, 5.0])
        print(np.isnan(x).sum(), "missing")
        clean = x[~np.isnan(x)]
        print(clean.mean())
        x[np.isnan(x)] = np.nanmean(x)
        x
        """),
    entry("trim_outliers", NP, twice("""
        data = np.random.randn(100)
        mask = (data > -1.5) & (data < 1.5)
        kept = data[mask]
        print(f"kept {kept.size} of {data.size}")
        """)),
    entry("where_one_argument", NP, """
        a = np.arange(20)
        idx = np.where(a % 3 == 0)[0]
        print(idx)
        print(np.flatnonzero(a > 15))
        print(np.extract(a % 7 == 0, a))
        """),
    entry("unique_rows", NP, """
        pts = np.array([[1, 2], [3, 4], [1, 2], [5, 6], [3, 4]])
        uniq, inv = np.unique(pts, axis=0, return_inverse=True)
        print(uniq)
        print(inv)
        """),
    entry("group_by_label", """
        import numpy as np
        rng = np.random.default_rng(9)
        labels = rng.integers(0, 3, size=30)
        values = rng.normal(size=30)
        """, """
        for k in np.unique(labels):
            group = values[labels == k]
            print(k, group.size, round(group.mean(), 3))
        """, """
        sums = np.bincount(labels, weights=values)
        counts = np.bincount(labels)
        print(sums / counts)
        """),
    entry("most_frequent", NP, """
        Z = np.random.randint(0, 10, 50)
        print(np.bincount(Z).argmax())
        """),
    entry("closest_value", NP, """
        Z = np.arange(100)
        v = np.random.uniform(0, 100)
        index = (np.abs(Z - v)).argmin()
        print(Z[index])
        """),
    entry("leaderboard", """
        import numpy as np
        scores = np.array([88, 92, 79, 93, 85, 91])
        names = np.array(["ann", "bob", "cy", "dee", "eve", "fay"])
        """, """
        order = np.argsort(scores)[::-1]
        for rank, i in enumerate(order[:3], start=1):
            print(f"{rank}. {names[i]:<4} {scores[i]}")
        """, """
        top = np.partition(scores, -3)[-3:]
        print(np.sort(top))
        above = names[scores > scores.mean()]
        print(list(above))
        """),
    entry("filter_then_compute", NP, """
        x = np.linspace(-2, 2, 41)
        y = x ** 3 - x
        roots_approx = x[np.abs(y) < 0.05]
        print(roots_approx)
        dist = np.diff(roots_approx)
        print(dist.round(2))
        """),
)

LOOPS = (
    entry("gradient_descent", """
        import numpy as np
        rng = np.random.default_rng(0)
        X = rng.normal(size=(100, 2))
        true_w = np.array([2.0, -3.0])
        y = X @ true_w + 0.5 + rng.normal(scale=0.1, size=100)
        """, """
        w = np.zeros(2)
        b = 0.0
        lr = 0.1
        for epoch in range(201):
            pred = X @ w + b
            err = pred - y
            w -= lr * (X.T @ err) / len(y)
            b -= lr * err.mean()
            if epoch % 50 == 0:
                print(f"epoch {epoch:3d} loss {np.mean(err**2):.5f}")
        """, """
        print("w =", w.round(3), "b =", round(b, 3))
        """),
    entry("kmeans", """
        import numpy as np
        rng = np.random.default_rng(3)
        X = np.vstack([rng.normal(0, 0.5, (30, 2)), rng.normal(3, 0.5, (30, 2))])
        """, """
        k = 2
        centroids = X[rng.choice(len(X), size=k, replace=False)]
        for it in range(10):
            d = ((X[:, None, :] - centroids[None, :, :]) ** 2).sum(axis=2)
            labels = np.argmin(d, axis=1)
            new = np.array([X[labels == j].mean(axis=0) for j in range(k)])
            shift = np.abs(new - centroids).max()
            centroids = new
            print(f"iteration {it}: shift {shift:.4f}")
            if shift < 1e-6:
                break
        """, """
        print(np.sort(centroids[:, 0]).round(2))
        print(np.bincount(labels))
        """),
    entry("running_totals_list", NP, """
        totals = []
        x = np.arange(1, 6)
        for i in range(len(x)):
            totals.append(x[:i + 1].sum())
        print(totals)
        print(np.array(totals) == np.cumsum(x))
        """),
    entry("in_place_updates", "import numpy as np\na = np.arange(10, dtype=float)", twice("""
        a += 1
        a[::2] *= -1
        np.clip(a, -5, 5, out=a)
        print(a)
        """)),
    entry("column_reductions", "import numpy as np\nA = np.arange(20, dtype=float).reshape(4, 5)",
          """
        col_mean = A.mean(axis=0)
        col_std = A.std(axis=0, ddof=1)
        row_max = A.max(axis=1)
        print(col_mean, col_std.round(3), row_max, sep="\\n")
        """, """
        print(A.cumsum(axis=1)[:, -1])
        print(A.argmax(axis=1), A.argmin())
        print(np.median(A), np.percentile(A, 90))
        """),
    entry("stats_dict", NP, """
        x = np.array([4.0, 8.0, 15.0, 16.0, 23.0, 42.0])
        stats = {"mean": x.mean(), "std": x.std(), "min": x.min(), "max": x.max()}
        for k, v in stats.items():
            print(f"{k:>5}: {v:8.3f}")
        """),
    entry("text_histogram", "import numpy as np\nnp.random.seed(21)\n"
          "heights = np.random.normal(170, 10, size=200)", """
        counts, edges = np.histogram(heights, bins=8)
        for c, lo, hi in zip(counts, edges[:-1], edges[1:]):
            print(f"{lo:6.1f}-{hi:6.1f} {'#' * (c // 2)}")
        """),
    entry("hilbert_matrix", NP, """
        n = 5
        M = np.zeros((n, n))
        for i in range(n):
            for j in range(n):
                M[i, j] = 1.0 / (i + j + 1)
        print(np.linalg.cond(M))
        """),
    entry("ndenumerate", NP, """
        Z = np.arange(6).reshape(2, 3)
        for index, value in np.ndenumerate(Z):
            print(index, value)
        for index in np.ndindex(Z.shape):
            pass
        index
        """),
    entry("accumulate_reduceat", NP, """
        x = np.array([3, 1, 4, 1, 5, 9, 2, 6])
        print(np.maximum.accumulate(x))
        print(np.add.reduceat(x, [0, 4, 6]))
        """),
    entry("compound_interest", NP, """
        rate = 0.05
        balance = 1000.0
        history = np.empty(10)
        for year in range(10):
            balance *= 1 + rate
            history[year] = balance
        print(history.round(2))
        print(f"final: ${balance:,.2f}")
        """),
    entry("collatz", NP, """
        n = 27
        seq = [n]
        while n != 1:
            n = n // 2 if n % 2 == 0 else 3 * n + 1
            seq.append(n)
        seq = np.array(seq)
        print(len(seq), seq.max())
        """),
    entry("power_iteration", """
        import numpy as np
        A = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 1.0]])
        """, twice("""
        v = np.ones(3)
        for i in range(100):
            v = A @ v
            v /= np.linalg.norm(v)
        lam = v @ A @ v
        print(f"dominant eigenvalue ~ {lam:.6f}")
        """), """
        print(np.linalg.eigvalsh(A).max())
        """),
    entry("euler_ode", NP, """
        dt = 0.01
        t = np.arange(0, 1 + dt, dt)
        y = np.empty_like(t)
        y[0] = 1.0
        for k in range(len(t) - 1):
            y[k + 1] = y[k] + dt * (-2 * y[k])
        err = np.abs(y - np.exp(-2 * t)).max()
        print(f"max error {err:.2e}")
        """),
    entry("loop_prints_progress", "import numpy as np\nx = np.ones(4)", twice("""
        for i in range(3):
            x = x * 2
            print(f"iter {i}: {x.sum():.2f}")
        """)),
    entry("conditional_message", NP, twice("""
        x = np.random.randn(10)
        if x.mean() > 0:
            print("positive on average")
        else:
            print("negative on average")
        sign = np.sign(x.sum())
        """)),
)

LINALG = (
    entry("solve_system", """
        import numpy as np
        A = np.array([[3.0, 1.0, 2.0], [1.0, 4.0, 0.5], [2.0, 0.5, 5.0]])
        b = np.array([1.0, 2.0, 3.0])
        """, """
        x = np.linalg.solve(A, b)
        print(x)
        print(np.allclose(A @ x, b))
        """, """
        Ainv = np.linalg.inv(A)
        print(np.round(Ainv @ A, 10))
        print("det:", np.linalg.det(A))
        """),
    entry("line_fit", "import numpy as np\nnp.random.seed(5)", """
        x = np.linspace(0, 10, 20)
        y = 3 * x + 2 + np.random.normal(0, 1, 20)
        coeffs = np.polyfit(x, y, 1)
        print("slope %.3f intercept %.3f" % tuple(coeffs))
        """, """
        A = np.vstack([x, np.ones_like(x)]).T
        sol, res, rank, sv = np.linalg.lstsq(A, y, rcond=None)
        print(sol, rank)
        """),
    entry("low_rank_svd", NP, """
        rng = np.random.default_rng(4)
        M = rng.normal(size=(6, 4))
        U, s, Vt = np.linalg.svd(M, full_matrices=False)
        print(s.round(4))
        M2 = (U[:, :2] * s[:2]) @ Vt[:2]
        print(np.linalg.norm(M - M2))
        """),
    entry("eigen_pairs", NP, """
        A = np.array([[2.0, 1.0], [1.0, 3.0]])
        vals, vecs = np.linalg.eig(A)
        for val, vec in zip(vals, vecs.T):
            print(f"lambda={val:.4f}", vec)
        """),
    entry("cholesky_qr", NP, """
        A = np.array([[4., 2.], [2., 3.]])
        L = np.linalg.cholesky(A)
        print(L)
        Q, R = np.linalg.qr(np.arange(6.).reshape(3, 2))
        print(np.abs(Q.T @ Q - np.eye(2)).max() < 1e-12)
        """),
    entry("pairwise_distances", "import numpy as np\nnp.random.seed(17)", """
        P = np.random.rand(5, 2)
        D = np.sqrt(((P[:, None, :] - P[None, :, :]) ** 2).sum(-1))
        print(D.round(3))
        i, j = np.unravel_index(np.argmax(D), D.shape)
        print("farthest pair", i, j)
        """),
    entry("outer_einsum_kron", NP, """
        a = np.arange(3)
        b = np.arange(4)
        print(np.outer(a, b))
        print(np.einsum('i,j->ij', a, b).sum())
        print(np.kron(np.eye(2), np.ones((2, 2))))
        """),
    entry("markov_chain", NP, """
        P = np.array([[0.9, 0.1], [0.5, 0.5]])
        state = np.array([1.0, 0.0])
        for step in range(5):
            state = state @ P
            print(step, state.round(4))
        print(np.linalg.matrix_power(P, 50)[0])
        """),
    entry("gram_schmidt", NP, """
        V = np.array([[1.0, 1.0, 0.0], [1.0, 0.0, 1.0], [0.0, 1.0, 1.0]])
        Q = np.zeros_like(V)
        for i in range(V.shape[0]):
            q = V[i].copy()
            for j in range(i):
                q -= (Q[j] @ V[i]) * Q[j]
            Q[i] = q / np.linalg.norm(q)
        print(np.round(Q @ Q.T, 12))
        """),
    entry("normal_equations", """
        import numpy as np
        rng = np.random.default_rng(8)
        X = np.c_[np.ones(30), rng.uniform(0, 5, 30)]
        y = X @ np.array([1.0, 2.0]) + rng.normal(0, 0.3, 30)
        """, """
        beta = np.linalg.inv(X.T @ X) @ X.T @ y
        residuals = y - X @ beta
        r2 = 1 - residuals.var() / y.var()
        print(f"beta = {beta.round(3)}, R^2 = {r2:.4f}")
        """),
)

MISC = (
    entry("star_import", "x0 = 1", """
        from numpy import *
        x = linspace(0, 2 * pi, 5)
        y = sin(x)
        print(y.round(3))
        """, """
        z = array([1, 2, 3]) * 2
        print(z.sum(), mean(z))
        """),
    entry("timeit_magic", "import numpy as np\nx = np.random.rand(1000)", """
        %timeit -n1 x + 1
        y = x + 1
        print(y[:3])
        """, """
        %time s = np.sort(x)
        print(s[:2])
        """),
    entry("display_call", NP, """
        from IPython.display import display
        A = np.eye(2)
        display(A)
        B = A * 3
        B
        """),
    entry("csv_round_trip", NP, """
        np.savetxt("scores.csv", np.arange(6).reshape(2, 3), delimiter=",", fmt="%d")
        loaded = np.genfromtxt("scores.csv", delimiter=",")
        print(loaded)
        """, """
        np.save("arr.npy", loaded * 2)
        back = np.load("arr.npy")
        print(back.sum())
        """),
    entry("text_data", NP, """
        from io import StringIO
        text = "a,b,c\\n1,2,3\\n4,5,6\\n"
        data = np.genfromtxt(StringIO(text), delimiter=",", skip_header=1)
        print(data.mean(axis=0))
        """),
    entry("timing_by_hand", NP, """
        import time
        t0 = time.perf_counter()
        M = np.random.rand(50, 50)
        Minv = np.linalg.inv(M)
        elapsed = time.perf_counter() - t0
        ok = np.allclose(M @ Minv, np.eye(50))
        print("ok:", ok)
        """, varies=("t0", "elapsed")),
    entry("errstate_ignore", NP, """
        x = np.array([1.0, 0.0, -1.0])
        with np.errstate(divide="ignore", invalid="ignore"):
            r = 1.0 / x
            l = np.log(x)
        print(r, l)
        """),
    entry("running_mean_class", NP, """
        class RunningMean:
            def __init__(self):
                self.n = 0
                self.total = 0.0

            def add(self, x):
                self.n += x.size
                self.total += x.sum()
                return self

            @property
            def value(self):
                return self.total / self.n

        rm = RunningMean()
        for chunk in np.array_split(np.arange(10.0), 3):
            rm.add(chunk)
        print(rm.value)
        """, twice("""
        rm.add(np.array([100.0]))
        print(rm.n, rm.value)
        """)),
    entry("logging_calls", NP, """
        import logging
        log = logging.getLogger("analysis")
        x = np.arange(5.0)
        log.info("mean is %s", x.mean())
        y = x / x.max()
        log.warning("scaled %d values", y.size)
        """),
    entry("python_values", NP, """
        v = np.array([1.5, 2.5, 3.5])
        lst = v.tolist()
        first = v[0].item()
        print(type(lst), type(first), lst)
        total = sum(lst)
        """),
    entry("structured_array", NP, """
        people = np.array([("ann", 31, 1.62), ("bob", 25, 1.80), ("cy", 40, 1.75)],
                          dtype=[("name", "U10"), ("age", "i4"), ("height", "f8")])
        print(people["age"].mean())
        older = people[people["age"] > 30]
        print(older["name"])
        """),
    entry("dates", NP, """
        days = np.arange('2024-01-01', '2024-01-08', dtype='datetime64[D]')
        print(days)
        weekend = np.is_busday(days) == False
        print(days[weekend])
        """),
    entry("spectrum_peaks", NP, """
        t = np.linspace(0, 1, 64, endpoint=False)
        sig = np.sin(2 * np.pi * 5 * t) + 0.5 * np.sin(2 * np.pi * 12 * t)
        spec = np.abs(np.fft.rfft(sig))
        peaks = np.argsort(spec)[-2:]
        print(sorted(peaks))
        """),
    entry("math_module", "import numpy as np\nimport math", """
        r = np.array([1.0, 2.0, 3.0])
        areas = [math.pi * v ** 2 for v in r]
        print([round(a, 2) for a in areas])
        total = math.fsum(areas)
        total
        """),
    entry("list_of_matrices", NP, """
        mats = [np.eye(2) * k for k in range(1, 4)]
        stacked = np.stack(mats)
        print(stacked.shape)
        print(sum(m.trace() for m in mats))
        """),
    entry("assert_inverse", "import numpy as np\nnp.random.seed(2)", """
        A = np.random.rand(3, 3) + 3 * np.eye(3)
        Ainv = np.linalg.inv(A)
        assert np.allclose(A @ Ainv, np.eye(3)), "inverse is wrong"
        print("inverse ok")
        """),
    entry("testing_helpers", NP, """
        from numpy.testing import assert_allclose
        x = np.linspace(0, 1, 5)
        assert_allclose(x[-1], 1.0)
        print("close enough")
        """),
)

ERRORS = (
    entry("broadcast_mismatch", NP, raising("""
        a = np.arange(3)
        b = np.arange(4)
        print("adding")
        c = a + b
        """)),
    entry("singular_matrix", NP, raising("""
        S = np.array([[1.0, 2.0], [2.0, 4.0]])
        print(np.linalg.det(S))
        Sinv = np.linalg.inv(S)
        """)),
    entry("index_past_the_end", NP, raising("""
        arr = np.zeros(5)
        for i in range(6):
            arr[i] = i * 2
        """), """
        print(arr, i)
        """),
    entry("bad_reshape", NP, raising("""
        x = np.arange(10)
        y = x.reshape(3, 4)
        """)),
    entry("typo_in_name", NP, raising("""
        resutl = np.ones(3)
        print(result)
        """)),
    entry("probabilities_assert", NP, raising("""
        probs = np.array([0.2, 0.3, 0.4])
        assert np.isclose(probs.sum(), 1.0), f"probabilities sum to {probs.sum()}"
        """)),
    entry("matmul_mismatch", NP, raising("""
        W = np.ones((3, 4))
        v = np.ones(3)
        out = W @ v
        """)),
    entry("divide_raises", NP, raising("""
        with np.errstate(divide="raise"):
            ratio = np.array([1.0, 2.0]) / np.array([1.0, 0.0])
        """)),
    entry("insufficient_funds", NP, raising("""
        balances = np.array([100.0, 50.0, 20.0])
        for i, w in enumerate([30.0, 60.0, 10.0]):
            if w > balances[i]:
                raise RuntimeError(f"account {i}: insufficient funds "
                                   f"({balances[i]:.2f} < {w:.2f})")
            balances[i] -= w
            print("withdrew", w, "from", i)
        """), """
        print(balances)
        """),
    entry("string_into_floats", NP, raising("""
        x = np.array([1.5, 2.5])
        x[0] = "abc"
        """)),
    entry("missing_key", NP, raising("""
        results = {"train": np.ones(3)}
        print(results["test"].mean())
        """)),
    entry("array_to_int", NP, raising("""
        v = np.array([1, 2])
        n = int(v)
        """)),
    entry("sample_too_large", NP, raising("""
        rng = np.random.default_rng(0)
        pick = rng.choice(5, size=10, replace=False)
        """)),
    entry("error_then_fix", NP, raising("""
        weights = np.array([0.5, 0.3])
        features = np.array([1.0, 2.0, 3.0])
        score = weights @ features
        """), """
        weights = np.append(weights, 0.2)
        score = weights @ features
        print(score)
        """),
)

ANALYSES = (
    entry("grades", """
        import numpy as np
        rng = np.random.default_rng(31)
        grades = rng.normal(70, 12, size=40).round()
        """, """
        print(f"n={grades.size} mean={grades.mean():.1f} median={np.median(grades)}")
        print("failing:", (grades < 60).sum())
        """, """
        grades += 5
        np.clip(grades, 0, 100, out=grades)
        print(grades.max(), grades.min())
        """, """
        letters = np.select([grades >= 90, grades >= 80, grades >= 70, grades >= 60],
                            ["A", "B", "C", "D"], default="F")
        for letter, count in zip(*np.unique(letters, return_counts=True)):
            print(letter, count)
        """),
    entry("temperatures", """
        import numpy as np
        np.random.seed(10)
        temps = 20 + 8 * np.sin(np.linspace(0, 3, 28)) + np.random.randn(28)
        """, """
        temps_f = temps * 9 / 5 + 32
        print(temps_f[:7].round(1))
        """, """
        hottest = temps.argmax()
        print(f"hottest day: {hottest} at {temps[hottest]:.1f} C")
        hot_days = np.nonzero(temps > 25)[0]
        print("days above 25:", hot_days)
        """, """
        weekly = temps.reshape(4, 7).mean(axis=1)
        print(weekly.round(2))
        """),
    entry("portfolio_drawdown", """
        import numpy as np
        rng = np.random.default_rng(77)
        returns = rng.normal(0.0005, 0.01, size=250)
        """, """
        value = 100 * np.cumprod(1 + returns)
        print(f"final value {value[-1]:.2f}")
        """, """
        peak = np.maximum.accumulate(value)
        drawdown = (value - peak) / peak
        worst = drawdown.argmin()
        print(f"max drawdown {drawdown.min():.2%} on day {worst}")
        """),
    entry("tiny_image", """
        import numpy as np
        rng = np.random.default_rng(5)
        img = rng.integers(0, 256, size=(8, 8), dtype=np.uint8)
        """, """
        binary = (img > 127).astype(np.uint8)
        print(binary)
        print("white pixels:", binary.sum())
        """, """
        flipped = np.fliplr(img)
        rotated = np.rot90(img)
        pooled = img.reshape(4, 2, 4, 2).mean(axis=(1, 3))
        print(pooled)
        """, """
        img[img < 50] = 0
        print((img == 0).sum())
        """),
    entry("nearest_neighbour", """
        import numpy as np
        rng = np.random.default_rng(12)
        train = rng.normal(size=(20, 2)) + np.repeat([[0, 0], [2, 2]], 10, axis=0)
        train_labels = np.repeat([0, 1], 10)
        query = rng.normal(size=(5, 2)) + 1
        """, """
        d = np.linalg.norm(query[:, None, :] - train[None, :, :], axis=2)
        nearest = d.argmin(axis=1)
        pred = train_labels[nearest]
        print(pred)
        """, """
        k = 3
        knn = np.argsort(d, axis=1)[:, :k]
        votes = train_labels[knn]
        pred_k = (votes.mean(axis=1) > 0.5).astype(int)
        print(pred_k, (pred_k == pred).mean())
        """),
    entry("sales_report", """
        import numpy as np
        rng = np.random.default_rng(2)
        units = rng.integers(0, 20, size=(4, 6))
        prices = np.array([2.5, 4.0, 1.25, 10.0, 3.0, 7.5])
        """, """
        revenue = units * prices
        by_store = revenue.sum(axis=1)
        for store, total in enumerate(by_store):
            print(f"store {store}: ${total:8.2f}")
        """, """
        best = np.argmax(revenue.sum(axis=0))
        print("best product:", best, "units sold:", units[:, best].sum())
        zero_days = np.argwhere(units == 0)
        print(len(zero_days), "sold-out slots")
        """),
    entry("sensor_cleanup", """
        import numpy as np
        np.random.seed(45)
        readings = np.random.normal(10, 2, size=60)
        readings[[5, 17, 33]] = [99.0, -50.0, 120.0]
        """, """
        med = np.median(readings)
        mad = np.median(np.abs(readings - med))
        bad = np.abs(readings - med) > 5 * mad
        print("bad readings at", np.flatnonzero(bad))
        """, twice("""
        readings[bad] = med
        print(readings.min().round(2), readings.max().round(2))
        """)),
    entry("dice_simulation", "import numpy as np\nrng = np.random.default_rng(100)", """
        two = rng.integers(1, 7, size=(10000, 2)).sum(axis=1)
        freq = np.bincount(two)[2:] / two.size
        for total, f in zip(range(2, 13), freq):
            print(f"{total:2d} {f:.4f} {'*' * int(f * 100)}")
        """, """
        print("P(7) =", (two == 7).mean())
        """),
    entry("matrix_stats_pipeline", NP, """
        rng = np.random.RandomState(0)
        M = rng.rand(6, 4)
        print(M.shape)
        """, """
        M[M < 0.2] = 0
        row_nnz = np.count_nonzero(M, axis=1)
        print(row_nnz)
        dense_rows = M[row_nnz == row_nnz.max()]
        print(dense_rows.shape)
        """, """
        norms = np.linalg.norm(M, axis=1)
        Mn = M / norms[:, None]
        print((Mn @ Mn.T).round(2))
        """),
)

SIMULATIONS = (
    entry("brownian_path", NP, """
        rng = np.random.default_rng(2024)
        n_steps, dt = 500, 0.01
        x = np.zeros(n_steps + 1)
        for t in range(n_steps):
            x[t + 1] = x[t] + np.sqrt(dt) * rng.standard_normal()
        print(f"final {x[-1]:.4f}, max {x.max():.4f}")
        """),
    entry("ar1_process", NP, """
        rng = np.random.default_rng(7)
        phi, sigma = 0.8, 0.5
        y = np.zeros(5)
        history = []
        for t in range(200):
            y = phi * y + sigma * rng.standard_normal(5)
            history.append(y.copy())
        H = np.array(history)
        print(H.shape, H.mean(axis=0).round(3))
        """),
    entry("sgd_linear_regression", NP, """
        rng = np.random.default_rng(0)
        X = rng.normal(size=(200, 3))
        true_w = np.array([1.5, -2.0, 0.5])
        y = X @ true_w + 0.1 * rng.normal(size=200)
        """, twice("""
        w = np.zeros(3)
        lr = 0.05
        for epoch in range(100):
            i = rng.integers(0, len(X), size=16)
            grad = X[i].T @ (X[i] @ w - y[i]) / len(i)
            w -= lr * grad
        print(w.round(2))
        """)),
    entry("monte_carlo_integral", NP, """
        np.random.seed(1)
        estimates = []
        for trial in range(20):
            u = np.random.rand(1000)
            estimates.append(np.mean(np.exp(-u ** 2)))
        print(np.mean(estimates), np.std(estimates))
        """),
    entry("langevin_particles", NP, """
        rng = np.random.default_rng(3)
        pos = rng.uniform(-1, 1, size=(100, 2))
        for step in range(50):
            force = -pos
            pos = pos + 0.01 * force + 0.1 * rng.normal(size=pos.shape)
        print(pos.mean(axis=0).round(3), pos.std().round(3))
        """),
    entry("noisy_sine_fit", NP, """
        x = np.linspace(0, 2 * np.pi, 50)
        np.random.seed(42)
        y = np.sin(x) + 0.1 * np.random.randn(50)
        coef = np.polyfit(x, y, 5)
        print(np.round(coef, 3))
        """),
    entry("bootstrap_mean", NP, """
        rng = np.random.default_rng(5)
        data = rng.exponential(2.0, size=100)
        means = np.empty(1000)
        for b in range(1000):
            sample = rng.choice(data, size=data.size)
            means[b] = sample.mean()
        lo, hi = np.percentile(means, [2.5, 97.5])
        print(f"95% CI: [{lo:.3f}, {hi:.3f}]")
        """),
    entry("dropout_mask", NP, """
        rng = np.random.default_rng(9)
        h = rng.standard_normal((4, 8))
        mask = rng.random(h.shape) < 0.5
        h_drop = h * mask / 0.5
        print(mask.sum(), h_drop.round(2)[0])
        """),
    entry("random_walk_2d", NP, """
        np.random.seed(0)
        position = np.zeros(2)
        for step in range(1000):
            position += np.random.randn(2)
        distance = np.linalg.norm(position)
        print("distance from origin:", round(distance, 2))
        """),
)

ENTRIES = (BASICS + RANDOM + HELPERS + DATA_DEPENDENT + LOOPS + LINALG + MISC + ERRORS + ANALYSES
           + SIMULATIONS)
