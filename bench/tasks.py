"""The training tasks of the time-to-accuracy benchmark: "mlp", "cnn" and "seq",
generated in the process and the same on every rank for a seed. What each task is and
how its learning rate and target were chosen: docs/benchmarks.md, "Time to accuracy".

Interface: ``TASKS[name](seed)`` builds the data; ``make_model(seed)`` (deterministic,
no buffers, so ranks' models can be averaged), ``batches(rank, size, mode, steps,
seed)`` (``steps`` int64 index tensors of shape (batch,): this rank's batches, the same
for every method), ``loss(model, batch)``, ``compute_scale(batch)`` (the batch's
relative accelerator compute, mean ~1.0) and ``accuracy(model)`` (% on the held-out
set); attributes ``name``, ``num_classes``, ``lr``, ``momentum``, ``batch`` (per rank)
and ``target`` (held-out accuracy, %).
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

MODES = ("iid", "noniid")
HOME_FRACTION = 0.8
TASK_SEED = 0  # fixes each problem (centres, chains, glyphs); the run seed draws samples


def home_classes(rank, size, num_classes):
    """This rank's classes for non-IID data: consecutive, starts spread evenly."""
    n_home = 2 if 2 * size >= num_classes else 3
    start = rank * num_classes // size
    return sorted({(start + j) % num_classes for j in range(n_home)})


def _seeded_model(seed, build):
    """build() under torch.manual_seed(seed), leaving the global RNG as it was."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return build()


class Task:
    """Common part. A subclass sets x_train, y_train (numpy int64), y_train_t (the same
    as a tensor), x_test and y_test (tensor) in __init__ and defines make_model.

    The local optimizer is ``optimizer`` ("sgd": SGD with ``momentum``; "adam": Adam
    with torch's defaults) at ``lr``, multiplied by ``decay[0]`` at each epoch in
    ``decay[1]`` (a step schedule; None: constant). ``target`` is on the plateau of
    the synchronous baseline, ``rising_target`` on the rising part of its curve."""
    num_classes = 10
    momentum = 0.9
    batch = 16
    optimizer = "sgd"
    decay = None
    diloco_outer_lr = 0.2   # the DiLoCo baseline's (bench/methods.py); docs/benchmarks.md

    def epoch_pool(self, seed, samples):
        """The epoch loop's training set: a fixed subset of ``samples`` indices of the
        training set, drawn alike on every rank for ``seed``."""
        return np.random.default_rng((seed, 11)).choice(
            len(self.y_train), size=min(samples, len(self.y_train)), replace=False)

    def lr_at(self, epoch):
        """The learning rate of epoch ``epoch`` (0-based) under the step schedule."""
        if self.decay is None:
            return self.lr
        factor, at = self.decay
        return self.lr * factor ** sum(1 for e in at if epoch >= e)

    def make_optimizer(self, params):
        if self.optimizer == "adam":
            return torch.optim.Adam(params, lr=self.lr)
        return torch.optim.SGD(params, lr=self.lr, momentum=self.momentum)

    def batches(self, rank, size, mode, steps, seed, home_fraction=HOME_FRACTION):
        """This rank's training batches: a list of `steps` index tensors (batch,)."""
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
        g = np.random.default_rng((seed, 2, rank, MODES.index(mode)))
        shape = (steps, self.batch)
        if mode == "iid":
            idx = g.integers(0, len(self.y_train), shape)
        else:
            home = np.isin(self.y_train, home_classes(rank, size, self.num_classes))
            home_pool, other_pool = np.flatnonzero(home), np.flatnonzero(~home)
            from_home = g.random(shape) < home_fraction
            idx = np.where(from_home,
                           home_pool[g.integers(0, len(home_pool), shape)],
                           other_pool[g.integers(0, len(other_pool), shape)])
        return list(torch.from_numpy(idx))

    def loss(self, model, batch):
        return F.cross_entropy(model(self.x_train[batch]), self.y_train_t[batch])

    def compute_scale(self, batch):
        return 1.0

    def accuracy(self, model):
        with torch.no_grad():
            pred = model(self.x_test).argmax(1)
        return 100.0 * (pred == self.y_test).float().mean().item()


def _store(task, train, test):
    (task.x_train, task.y_train), (task.x_test, y_test) = train, test
    task.y_train_t = torch.from_numpy(task.y_train)
    task.y_test = torch.from_numpy(y_test)


# -- mlp: Gaussian mixture ----------------------------------------------------------------
class MLPTask(Task):
    name = "mlp"
    DIM, CLUSTERS, NOISE = 64, 3, 2.2
    HIDDEN = (128, 128)
    N_TRAIN, N_TEST = 50000, 5000
    lr = 0.05
    target = 84.5
    rising_target = 80.0

    def __init__(self, seed):
        centres = np.random.default_rng((TASK_SEED, 1)).standard_normal(
            (self.num_classes * self.CLUSTERS, self.DIM))
        g = np.random.default_rng((seed, 1, 1))

        def draw(n):
            y = g.integers(0, self.num_classes, n)
            k = g.integers(0, self.CLUSTERS, n)
            noise = self.NOISE * g.standard_normal((n, self.DIM))
            x = centres[y * self.CLUSTERS + k] + noise
            return torch.tensor(x, dtype=torch.float32), y
        _store(self, draw(self.N_TRAIN), draw(self.N_TEST))

    def make_model(self, seed):
        def build():
            layers, width = [], self.DIM
            for h in self.HIDDEN:
                layers += [nn.Linear(width, h), nn.ReLU()]
                width = h
            return nn.Sequential(*layers, nn.Linear(width, self.num_classes))
        return _seeded_model(seed, build)


# -- cnn: generated glyph digits ----------------------------------------------------------
_GLYPHS = [  # a 5x7 bitmap font, digits 0-9
    [".###.", "#...#", "#..##", "#.#.#", "##..#", "#...#", ".###."],
    ["..#..", ".##..", "..#..", "..#..", "..#..", "..#..", ".###."],
    [".###.", "#...#", "....#", "...#.", "..#..", ".#...", "#####"],
    ["#####", "...#.", "..#..", "...#.", "....#", "#...#", ".###."],
    ["...#.", "..##.", ".#.#.", "#..#.", "#####", "...#.", "...#."],
    ["#####", "#....", "####.", "....#", "....#", "#...#", ".###."],
    ["..##.", ".#...", "#....", "####.", "#...#", "#...#", ".###."],
    ["#####", "....#", "...#.", "..#..", ".#...", ".#...", ".#..."],
    [".###.", "#...#", "#...#", ".###.", "#...#", "#...#", ".###."],
    [".###.", "#...#", "#...#", ".####", "....#", "...#.", ".##.."],
]


class CNNTask(Task):
    name = "cnn"
    SIZE = 12
    N_TRAIN, N_TEST = 20000, 2000
    # rotation (rad), scale range, shear, shift (of the half-width 1), pixel noise sigma
    ROT, SCALE, SHEAR, SHIFT, NOISE = 0.25, (0.75, 1.15), 0.3, 0.2, 0.2
    CHANNELS, HIDDEN = 16, 64
    lr = 0.1
    target = 94.5
    rising_target = 90.0

    def __init__(self, seed):
        glyphs = np.zeros((self.num_classes, 1, 9, 9), np.float32)  # 7x5 in a 9x9 frame
        for c, rows in enumerate(_GLYPHS):
            glyphs[c, 0, 1:8, 2:7] = [[ch == "#" for ch in row] for row in rows]
        glyphs = torch.from_numpy(glyphs)
        g = np.random.default_rng((seed, 2, 1))

        def draw(n):
            y = g.integers(0, self.num_classes, n)
            rot = g.uniform(-self.ROT, self.ROT, n)
            scale = g.uniform(*self.SCALE, n)
            shear = g.uniform(-self.SHEAR, self.SHEAR, n)
            shift = g.uniform(-self.SHIFT, self.SHIFT, (n, 2))
            c, s = np.cos(rot), np.sin(rot)
            # output -> glyph coordinates: rotation times shear, shrunk by 1/scale
            a = np.stack([np.stack([c, shear * c - s], 1),
                          np.stack([s, shear * s + c], 1)], 1) / scale[:, None, None]
            theta = torch.tensor(np.concatenate([a, shift[:, :, None]], 2),
                                 dtype=torch.float32)
            grid = F.affine_grid(theta, (n, 1, self.SIZE, self.SIZE), align_corners=False)
            x = F.grid_sample(glyphs[y], grid, align_corners=False)
            x = x * torch.from_numpy(g.uniform(0.6, 1.4, (n, 1, 1, 1)).astype(np.float32))
            x = x + self.NOISE * torch.from_numpy(
                g.standard_normal(x.shape).astype(np.float32))
            return x.contiguous(), y
        _store(self, draw(self.N_TRAIN), draw(self.N_TEST))

    def make_model(self, seed):
        side = (self.SIZE - 3) // 2 + 1  # 5
        c, h = self.CHANNELS, self.HIDDEN
        return _seeded_model(seed, lambda: nn.Sequential(
            nn.Conv2d(1, c, 3, stride=2), nn.ReLU(), nn.Flatten(),
            nn.Linear(c * side * side, h), nn.ReLU(), nn.Linear(h, self.num_classes)))


# -- seq: variable-length Markov-chain sequences -------------------------------------------
class SeqPairs(nn.Module):
    """Width-2 1-D convolution over token embeddings (as a linear layer on adjacent
    pairs), ReLU, mean over the sequence's own pairs, linear. Padding is masked out."""

    def __init__(self, vocab, num_classes, d=16, h=64):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.pair = nn.Linear(2 * d, h)
        self.out = nn.Linear(h, num_classes)

    def forward(self, x, lengths):
        e = self.emb(x)
        h = F.relu(self.pair(torch.cat([e[:, :-1], e[:, 1:]], -1)))
        n = lengths - 1  # pairs in each sequence (lengths >= 2)
        keep = (torch.arange(h.shape[1])[None] < n[:, None]).to(h.dtype)
        return self.out((h * keep[..., None]).sum(1) / n[:, None])


class SeqTask(Task):
    name = "seq"
    VOCAB, MIN_LEN, MAX_LEN = 16, 4, 40
    LEN_MEDIAN, LEN_SIGMA = 11.0, 0.6
    SHARED, BETA = 1.5, 2.0  # scales of the shared and the class-specific logits
    N_TRAIN, N_TEST = 20000, 2000
    lr = 0.3
    target = 90.5
    rising_target = 85.0

    def __init__(self, seed):
        V, C = self.VOCAB, self.num_classes
        gt = np.random.default_rng((TASK_SEED, 3))
        logits = (self.SHARED * gt.standard_normal((1, V, V))
                  + self.BETA * gt.standard_normal((C, V, V)))
        p = np.exp(logits - logits.max(-1, keepdims=True))
        cum = np.cumsum(p / p.sum(-1, keepdims=True), -1)  # (class, from, to)
        cum[..., -1] = 1.0
        g = np.random.default_rng((seed, 3, 1))

        def draw(n):
            y = g.integers(0, C, n)
            lengths = np.clip(np.rint(self.LEN_MEDIAN * np.exp(
                self.LEN_SIGMA * g.standard_normal(n))), self.MIN_LEN, self.MAX_LEN)
            tok = np.zeros((n, self.MAX_LEN), np.int64)
            tok[:, 0] = g.integers(0, V, n)
            for t in range(1, self.MAX_LEN):
                tok[:, t] = (cum[y, tok[:, t - 1]] < g.random(n)[:, None]).sum(1)
            lengths = lengths.astype(np.int64)
            tok[np.arange(self.MAX_LEN)[None] >= lengths[:, None]] = 0  # padding
            return torch.from_numpy(tok), torch.from_numpy(lengths), y
        x, self.len_train, y = draw(self.N_TRAIN)
        x_test, self.len_test, y_test = draw(self.N_TEST)
        _store(self, (x, y), (x_test, y_test))
        # The test set in length-sorted chunks, each padded to its own longest sequence.
        self._test_chunks = []
        for o in torch.argsort(self.len_test).chunk(4):
            n = self.len_test[o]
            self._test_chunks.append((self.x_test[o, :int(n.max())], n, self.y_test[o]))
        self._expected = {}

    def make_model(self, seed):
        return _seeded_model(seed, lambda: SeqPairs(self.VOCAB, self.num_classes))

    def loss(self, model, batch):
        lengths = self.len_train[batch]
        x = self.x_train[batch, :int(lengths.max())]  # padded to the batch's longest
        return F.cross_entropy(model(x, lengths), self.y_train_t[batch])

    def accuracy(self, model):
        with torch.no_grad():
            correct = sum(int((model(x, n).argmax(1) == y).sum())
                          for x, n, y in self._test_chunks)
        return 100.0 * correct / len(self.y_test)

    def expected_padded_tokens(self, b):
        """E[b x longest of b lengths drawn uniformly from the training set], exactly."""
        if b not in self._expected:
            counts = np.bincount(self.len_train.numpy(), minlength=self.MAX_LEN + 1)
            cdf_max = (np.cumsum(counts) / counts.sum()) ** b
            p_max = np.diff(np.concatenate([[0.0], cdf_max]))
            self._expected[b] = b * float((np.arange(len(p_max)) * p_max).sum())
        return self._expected[b]

    def compute_scale(self, batch):
        b = len(batch)
        return b * int(self.len_train[batch].max()) / self.expected_padded_tokens(b)


# -- held out: variants no default was tuned on (docs/benchmarks.md, "Held-out tasks") --
# Each differs from the three above in the learning rate and its schedule, the batch,
# the optimizer, the depth and width, or the classes. Their targets come from the
# synchronous baseline alone, never from WAGMA's runs, for the epoch loop's pool of
# 5,000 samples (`--epoch-samples 5000`): `python lab/task_targets.py --epochs 16
# --epoch-samples 5000 --seeds 0 1 2` (median over seeds by epoch): rising where it
# is at epochs 3-6, plateau within ~1.5 points of its last three epochs' mean
# (docs/benchmarks.md, "Held-out tasks").
class MLPAdamTask(MLPTask):
    """Adam, batch 32, one wide hidden layer."""
    name = "mlp_adam"
    optimizer, lr, batch = "adam", 2e-3, 32
    HIDDEN = (256,)
    target, rising_target = 81.0, 76.0


class MLP20Task(MLPTask):
    """20 classes (2 clusters each), three narrow layers, SGD with a step decay."""
    name = "mlp20"
    num_classes, CLUSTERS, NOISE = 20, 2, 2.0
    HIDDEN = (64, 64, 64)
    lr, decay = 0.1, (0.3, (4, 8))
    target, rising_target = 79.5, 68.0


class CNNSmallBatchTask(CNNTask):
    """Batch 8, 8 channels, SGD at half the rate with a step decay."""
    name = "cnn_b8"
    batch, lr, decay = 8, 0.05, (0.3, (3, 6))
    CHANNELS = 8
    target, rising_target = 94.0, 91.5


class CNNAdamTask(CNNTask):
    """Adam, batch 32, 32 channels, 128 hidden."""
    name = "cnn_adam"
    optimizer, lr, batch = "adam", 1e-3, 32
    CHANNELS, HIDDEN = 32, 128
    target, rising_target = 92.0, 86.0


class SeqDecayTask(SeqTask):
    """Batch 24, SGD at a higher rate, decayed at epoch 4."""
    name = "seq_decay"
    batch, lr, decay = 24, 0.5, (0.3, (4,))
    target, rising_target = 91.5, 88.0


TASKS = {"mlp": MLPTask, "cnn": CNNTask, "seq": SeqTask}
HELD_OUT = {T.name: T for T in (MLPAdamTask, MLP20Task, CNNSmallBatchTask, CNNAdamTask,
                                SeqDecayTask)}
ALL_TASKS = {**TASKS, **HELD_OUT}
