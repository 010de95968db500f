"""Task seeds from `numpy.random.SeedSequence`, computed for a million tasks at once.

A task's seed is ``SeedSequence(base_seed, spawn_key=(replicate, *level_words))
.generate_state(1, uint64)`` (top bit cleared). Calling SeedSequence once per task costs tens of
microseconds, which makes planning a 1,000,000-task design take half a minute, so this module
evaluates the same published mixing algorithm (O'Neill's seed_seq_fe, as NumPy implements it)
on whole arrays of spawn keys. The tests check it against NumPy's own SeedSequence, bit for bit.

Spawn-key words must have a fixed width per campaign for the arrays to line up: replicates are
below 2**32 (one 32-bit word) and level words have their top bit set (always two words).
"""

from __future__ import annotations

import numpy as np

POOL_SIZE = 4
INIT_A = np.uint32(0x43B0D7E5)
MULT_A = np.uint32(0x931E8875)
INIT_B = np.uint32(0x8B51F9DD)
MULT_B = np.uint32(0x58F38DED)
MIX_MULT_L = np.uint32(0xCA01F9DD)
MIX_MULT_R = np.uint32(0x4973F715)
XSHIFT = np.uint32(16)
LEVEL_WORD_FLAG = 1 << 63
SEED_MASK = (1 << 63) - 1


def int_words(value: int) -> list[int]:
    """A non-negative integer as 32-bit words, lowest first (NumPy's coercion of seeds)."""
    if value < 0:
        raise ValueError("seed words must be non-negative")
    words = [value & 0xFFFFFFFF]
    value >>= 32
    while value:
        words.append(value & 0xFFFFFFFF)
        value >>= 32
    return words


def _hash_constants(count: int) -> list[np.uint32]:
    """The successive multipliers of ``hashmix``: they depend only on the call count."""
    constants = []
    const = INIT_A
    with np.errstate(over="ignore"):
        for _ in range(count):
            constants.append(const)
            const = np.uint32(const * MULT_A)
    return constants


def _hashmix(values: np.ndarray, const: np.uint32) -> np.ndarray:
    values = values ^ const
    values = values * np.uint32(const * MULT_A)
    return values ^ (values >> XSHIFT)


def _mix(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    result = MIX_MULT_L * x - MIX_MULT_R * y
    return result ^ (result >> XSHIFT)


def spawned_seeds(base_seed: int, spawn_words: np.ndarray) -> np.ndarray:
    """63-bit seeds for rows of spawn-key words (shape tasks x words, dtype uint32)."""
    spawn_words = np.ascontiguousarray(spawn_words, dtype=np.uint32)
    rows = spawn_words.shape[0]
    run = int_words(base_seed)
    if spawn_words.shape[1] and len(run) < POOL_SIZE:
        run = run + [0] * (POOL_SIZE - len(run))
    fixed = np.array(run, dtype=np.uint32)
    width = len(fixed) + spawn_words.shape[1]

    def entropy(i: int) -> np.ndarray:
        if i < len(fixed):
            return np.full(rows, fixed[i], dtype=np.uint32)
        return spawn_words[:, i - len(fixed)]

    calls = POOL_SIZE + POOL_SIZE * (POOL_SIZE - 1) + POOL_SIZE * max(0, width - POOL_SIZE)
    constants = iter(_hash_constants(calls))
    with np.errstate(over="ignore"):
        pool = [
            _hashmix(entropy(i) if i < width else np.zeros(rows, np.uint32), next(constants))
            for i in range(POOL_SIZE)
        ]
        for src in range(POOL_SIZE):
            for dst in range(POOL_SIZE):
                if src != dst:
                    pool[dst] = _mix(pool[dst], _hashmix(pool[src], next(constants)))
        for src in range(POOL_SIZE, width):
            for dst in range(POOL_SIZE):
                pool[dst] = _mix(pool[dst], _hashmix(entropy(src), next(constants)))
        # generate_state(1, uint64): two 32-bit words from the pool, low word first
        const = INIT_B
        words = []
        for i in range(2):
            value = pool[i] ^ const
            const = np.uint32(const * MULT_B)
            value = value * const
            words.append(value ^ (value >> XSHIFT))
    seeds = words[0].astype(np.uint64) | (words[1].astype(np.uint64) << np.uint64(32))
    return seeds & np.uint64(SEED_MASK)


def level_words_matrix(words: np.ndarray) -> np.ndarray:
    """64-bit level words (top bit set) as pairs of 32-bit words, low first."""
    words = np.asarray(words, dtype=np.uint64).reshape(len(words), -1)
    low = (words & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    high = (words >> np.uint64(32)).astype(np.uint32)
    return np.stack([low, high], axis=-1).reshape(len(words), -1)


def seed31(seed: int) -> int:
    """A task's seed for a program that parses 31 bits only (C's ``atoi``, a 32-bit ``int``,
    Java's ``Integer.parseInt``): the first 32-bit word of the task's own stream,
    ``SeedSequence(seed).generate_state(1, uint32)[0]`` (the stream `numpy.random.default_rng`
    draws from), shifted right by one bit: 0 to 2**31 - 1. A function of the task's seed
    alone, so tasks that share a seed (paired levels) share it too."""
    word = np.random.SeedSequence(int(seed)).generate_state(1, np.uint32)[0]
    return int(word) >> 1
