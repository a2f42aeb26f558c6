"""operators/stats/draws.py makes exactly ``random.Random(text)``'s draws, and the noise filter draws
with it exactly what it drew with ``random.Random`` (docs/method.md §14: the published rates
depend on these draws)."""

from __future__ import annotations

import random

import pytest
from river import dummy

from foldstream.operators.stats.detectors import compiled
from foldstream.operators.learners.noise import NoiseFilter


def reference(text: str, size: int) -> tuple[float, int]:
    """The draws as the noise filter made them with the standard library."""
    generator = random.Random(text)
    u = generator.random()
    return u, generator.choice(range(size)) if size else -1


def test_the_compiled_draws_equal_randoms_own_on_many_texts_and_sizes():
    rng = random.Random(7)
    texts = [f"{rng.randrange(-10**9, 10**12)}:{rng.choice([rng.random() * 1e4, float(i)])}:{i}"
             for i in range(3000)]
    # odd texts: no seed, a text longer than MT19937's state (its own step count), leading NUL
    # bytes (an integer has none), non-ASCII, one character
    texts += ["None:0.0:0", "7:" + "9" * 3000 + ":1", "\x00\x00ab", "\x00", "é:1.5:2", "x"]
    sizes = [rng.choice([0, 1, 2, 3, 5, 7, 64, 1000, 2**31 + 5]) for _ in texts]
    uniforms, choices = compiled("draws").draws(texts, sizes)
    got = [(float(u), int(c)) for u, c in zip(uniforms, choices)]
    assert got == [reference(t, n) for t, n in zip(texts, sizes)]


def test_no_texts_no_draws_and_sizes_beyond_32_bits_are_refused():
    uniforms, choices = compiled("draws").draws([], [])
    assert len(uniforms) == len(choices) == 0
    with pytest.raises(ValueError, match="2\\*\\*32"):
        compiled("draws").draws(["a"], [2**32])


class StdlibNoiseFilter(NoiseFilter):
    """The filter's per-example draws as they were made before operators/stats/draws.py."""

    def predict_one(self, x, **kwargs):
        prediction = self.model.predict_one(x)
        draw = random.Random(f"{self.seed}:{self._learned}:{self._predicted}")
        self._predicted += 1
        if self._classes and draw.random() < self.p_noise:
            return draw.choice(self._classes)
        return prediction


@pytest.mark.parametrize("p_noise", [0.0, 0.3, 1.0])
def test_the_noise_filter_predicts_as_with_the_standard_librarys_draws(p_noise):
    rng = random.Random(3)
    ours = NoiseFilter(dummy.NoChangeClassifier(), p_noise=p_noise, seed=11)
    theirs = StdlibNoiseFilter(dummy.NoChangeClassifier(), p_noise=p_noise, seed=11)
    got, want = [], []
    for i in range(400):
        got.append(ours.predict_one({}))
        want.append(theirs.predict_one({}))
        label, weight = rng.choice("abcde"[: 1 + i // 80]), rng.choice([0, 1, 1, 2, 3])
        if weight:
            ours.learn_one({}, label, w=weight)
            theirs.learn_one({}, label, w=weight)
    assert got == want
    assert p_noise == 0.0 or len(set(got)) > 2  # the draws did replace predictions


def test_the_whole_twist_is_mt19937s_for_a_choice_that_reads_past_its_first_words():
    import numpy as np

    generator = random.Random("a long rejection")
    seeded = np.array(generator.getstate()[1][:624], dtype=np.uint32)
    generator.getrandbits(32)  # the first output twists the whole state
    twisted = np.array(generator.getstate()[1][:624], dtype=np.uint32)
    assert (compiled("draws")._twisted(seeded) == twisted).all()
