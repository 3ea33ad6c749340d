'''The workspace-written function library that generated repositories are built from.

Each theme is one module of a generated package: a list of `Func(name, source, calls,
inputs)` where `source` is the correct implementation, `calls` the other functions of
the same module it uses (so a repository containing it also contains them), and `inputs`
positional-argument tuples; a test asserts `name(*args) == expected` with `expected`
computed by running the correct source at generation time.

The functions are written so that every bug class of `mutations.py` has sites: boundary
comparisons, integer constants in arithmetic/indexing/ranges, `if` branches, defaults,
and calls with two or more positional arguments.
'''
from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Func:
    name: str
    source: str
    calls: tuple[str, ...]
    inputs: tuple[tuple, ...]


def _f(name, source, inputs, calls=()):
    return Func(name, source.strip("\n") + "\n", tuple(calls), tuple(inputs))


NUMERIC = [
    _f("clamp", '''
def clamp(x, lo, hi):
    """Limit x to the closed interval [lo, hi]."""
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x
''', [(5, 0, 4), (-3, 0, 4), (2, 0, 4), (4, 0, 4), (0, 0, 4)]),
    _f("normalize", '''
def normalize(values, lo=0, hi=10):
    """Clamp every value into [lo, hi]."""
    return [clamp(v, lo, hi) for v in values]
''', [([12, -1, 5],), ([3, 30], 1, 20), ([0, 10, 11],), ([7], 8, 9)], ["clamp"]),
    _f("count_above", '''
def count_above(values, threshold=0):
    """How many values are strictly greater than threshold."""
    count = 0
    for v in values:
        if v > threshold:
            count += 1
    return count
''', [([1, -2, 3, 0],), ([5, 6, 7], 6), ([0, 0],), ([2, 4, 4, 9], 4)]),
    _f("safe_div", '''
def safe_div(a, b, default=0):
    """a / b, or default when b is zero."""
    if b == 0:
        return default
    return a / b
''', [(6, 3), (1, 0), (9, 2), (5, 0, -1), (0, 5)]),
    _f("mean", '''
def mean(values):
    """The arithmetic mean of values; 0 for an empty list."""
    if len(values) == 0:
        return 0
    return safe_div(sum(values), len(values))
''', [([1, 2, 3, 6],), ([],), ([5],), ([2, 3],)], ["safe_div"]),
    _f("digit_sum", '''
def digit_sum(n):
    """The sum of the decimal digits of a non-negative integer."""
    total = 0
    while n > 0:
        total += n % 10
        n = n // 10
    return total
''', [(0,), (7,), (1234,), (909,), (10,)]),
    _f("gcd", '''
def gcd(a, b):
    """The greatest common divisor of two non-negative integers."""
    while b != 0:
        a, b = b, a % b
    return a
''', [(12, 18), (7, 0), (0, 9), (35, 14), (17, 5)]),
    _f("power_mod", '''
def power_mod(base, exp, mod=1000):
    """base ** exp modulo mod, by repeated multiplication."""
    result = 1
    for _ in range(exp):
        result = (result * base) % mod
    return result
''', [(2, 10), (3, 0), (7, 3, 10), (5, 4), (12, 2, 7)]),
    _f("sign", '''
def sign(x):
    """1 for positive x, -1 for negative x, 0 for zero."""
    if x > 0:
        return 1
    elif x < 0:
        return -1
    return 0
''', [(3,), (-2,), (0,), (1,), (-1,)]),
    _f("percent", '''
def percent(part, whole, digits=1):
    """part as a percentage of whole, rounded to digits decimals."""
    return round(safe_div(100 * part, whole), digits)
''', [(1, 3), (2, 0), (5, 8, 2), (3, 4)], ["safe_div"]),
]

SEQUENCES = [
    _f("chunk", '''
def chunk(items, size=2):
    """Consecutive lists of `size` items (the last one may be shorter)."""
    out = []
    for start in range(0, len(items), size):
        out.append(items[start:start + size])
    return out
''', [([1, 2, 3, 4, 5],), ([1, 2, 3], 3), ([],), ([1, 2, 3, 4], 3)]),
    _f("window_sums", '''
def window_sums(values, width=2):
    """The sums of every run of `width` consecutive values."""
    return [sum(values[i:i + width]) for i in range(len(values) - width + 1)]
''', [([1, 2, 3, 4],), ([1, 2, 3, 4], 3), ([5],), ([2, 2, 2], 1)]),
    _f("first_index", '''
def first_index(items, target, start=0):
    """The first index >= start holding target, or -1."""
    for i in range(start, len(items)):
        if items[i] == target:
            return i
    return -1
''', [([4, 5, 4], 4), ([4, 5, 4], 4, 1), ([1, 2], 3), ([7, 8, 9], 9), ([3], 3, 0)]),
    _f("dedupe", '''
def dedupe(items):
    """items without repeats, keeping the first occurrence of each."""
    seen = set()
    out = []
    for item in items:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out
''', [([1, 2, 1, 3, 2],), ([],), (["a", "a"],), ([5, 4, 5, 4, 3],)]),
    _f("rotate", '''
def rotate(items, k=1):
    """items rotated left by k places."""
    if not items:
        return []
    k = k % len(items)
    return items[k:] + items[:k]
''', [([1, 2, 3],), ([1, 2, 3, 4], 2), ([],), ([1, 2], 5)]),
    _f("take_below", '''
def take_below(values, limit):
    """The leading values that are smaller than limit."""
    out = []
    for v in values:
        if v >= limit:
            break
        out.append(v)
    return out
''', [([1, 2, 5, 1], 5), ([9, 1], 5), ([1, 2], 3), ([3, 4, 4], 4)]),
    _f("diffs", '''
def diffs(values):
    """Differences of consecutive values."""
    return [values[i + 1] - values[i] for i in range(len(values) - 1)]
''', [([1, 4, 9],), ([5],), ([3, 1],), ([0, 2, 2, 7],)]),
    _f("bisect_find", '''
def bisect_find(sorted_items, target):
    """The index of target in a sorted list (binary search), or -1."""
    lo, hi = 0, len(sorted_items) - 1
    while lo <= hi:
        mid = (lo + hi) // 2
        if sorted_items[mid] == target:
            return mid
        if sorted_items[mid] < target:
            lo = mid + 1
        else:
            hi = mid - 1
    return -1
''', [([1, 3, 5, 7, 9], 7), ([1, 3, 5], 1), ([1, 3, 5], 4), ([2, 4, 6, 8], 8), ([], 1)]),
    _f("last_n", '''
def last_n(items, n=1):
    """The last n items (all of them when n exceeds the length)."""
    if n <= 0:
        return []
    return items[-n:]
''', [([1, 2, 3],), ([1, 2, 3], 2), ([1], 4), ([4, 5], 0)]),
    _f("cumulative", '''
def cumulative(values, start=0):
    """Running totals of values, beginning from start."""
    total = start
    out = []
    for v in values:
        total = total + v
        out.append(total)
    return out
''', [([1, 2, 3],), ([5], 10), ([],), ([2, -2, 4], 1)]),
]

TEXT = [
    _f("pad_left", '''
def pad_left(text, width, fill=" "):
    """text right-aligned in a field of `width` characters."""
    if len(text) >= width:
        return text
    return fill * (width - len(text)) + text
''', [("ab", 4), ("abc", 3), ("7", 3, "0"), ("long", 2)]),
    _f("center", '''
def center(text, width):
    """text padded on both sides (the extra space on the left) to `width`."""
    left = pad_left(text, (width + len(text) + 1) // 2)
    return left + " " * (width - len(left))
''', [("ab", 6), ("a", 4), ("abc", 3), ("x", 2)], ["pad_left"]),
    _f("truncate", '''
def truncate(text, limit=10, suffix="..."):
    """text cut to at most `limit` characters, ending in suffix when cut."""
    if len(text) <= limit:
        return text
    return text[:limit - len(suffix)] + suffix
''', [("hello world!",), ("short",), ("abcdefgh", 6), ("abcdef", 6), ("abcdefg", 5, "~")]),
    _f("count_vowels", '''
def count_vowels(text):
    """The number of vowels (a, e, i, o, u, either case) in text."""
    count = 0
    for ch in text.lower():
        if ch in "aeiou":
            count += 1
    return count
''', [("Hello",), ("xyz",), ("AEIOU",), ("banana",)]),
    _f("is_palindrome", '''
def is_palindrome(text):
    """Whether text reads the same backwards, ignoring case and non-alphanumerics."""
    cleaned = [ch.lower() for ch in text if ch.isalnum()]
    return cleaned == cleaned[::-1]
''', [("Racecar",), ("ab",), ("A man, a plan",), ("",), ("No lemon, no melon",)]),
    _f("repeat_join", '''
def repeat_join(word, times=2, sep="-"):
    """word repeated `times` times, joined by sep."""
    return sep.join([word] * times)
''', [("ab",), ("x", 3), ("hi", 1), ("o", 3, "")]),
    _f("title_words", '''
def title_words(text, min_len=3):
    """Capitalise the words of at least `min_len` letters."""
    words = []
    for w in text.split():
        if len(w) >= min_len:
            w = w.capitalize()
        words.append(w)
    return " ".join(words)
''', [("the cat sat on a mat",), ("go to work", 2), ("an ox", 3), ("abc abcd", 4)]),
    _f("run_length", '''
def run_length(text):
    """Run-length encoding: each run of a character as the character and its count."""
    out = []
    i = 0
    while i < len(text):
        j = i
        while j < len(text) and text[j] == text[i]:
            j += 1
        out.append(text[i] + str(j - i))
        i = j
    return "".join(out)
''', [("aaabcc",), ("",), ("abc",), ("zzzz",)]),
    _f("initials", '''
def initials(name, sep="."):
    """The upper-case first letters of the words of name, each followed by sep."""
    letters = [w[0].upper() for w in name.split() if w]
    return sep.join(letters) + (sep if letters else "")
''', [("ada lovelace",), ("alan mathison turing", ""), ("",), ("x",)]),
    _f("strip_prefix", '''
def strip_prefix(text, prefix):
    """text without a leading prefix (unchanged when it does not start with it)."""
    if prefix and text.startswith(prefix):
        return text[len(prefix):]
    return text
''', [("unhappy", "un"), ("happy", "un"), ("abc", ""), ("aaa", "a")]),
]

RECORDS = [
    _f("lookup", '''
def lookup(mapping, key, default=None):
    """mapping[key], or default when the key is absent."""
    if key in mapping:
        return mapping[key]
    return default
''', [({"a": 1}, "a"), ({"a": 1}, "b"), ({}, "x", 0), ({"k": 0}, "k", 5)]),
    _f("invert", '''
def invert(mapping):
    """{value: key}; for a repeated value the first key wins."""
    out = {}
    for key, value in mapping.items():
        if value not in out:
            out[value] = key
    return out
''', [({"a": 1, "b": 2},), ({"a": 1, "b": 1},), ({},), ({"x": "y", "z": "w"},)]),
    _f("count_items", '''
def count_items(items):
    """{item: number of occurrences}."""
    counts = {}
    for item in items:
        counts[item] = lookup(counts, item, 0) + 1
    return counts
''', [(["a", "b", "a"],), ([],), ([1, 1, 1],), ([2, 3, 2, 3, 3],)], ["lookup"]),
    _f("top_n", '''
def top_n(scores, n=1):
    """The n (name, score) pairs with the highest scores, ties broken by name."""
    ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
    return ranked[:n]
''', [({"a": 3, "b": 5, "c": 1},), ({"a": 3, "b": 5, "c": 1}, 2), ({"x": 1, "y": 1}, 1), ({}, 3)]),
    _f("histogram", '''
def histogram(values, bins=2, lo=0, hi=10):
    """Counts of values in `bins` equal-width bins over [lo, hi); others are ignored."""
    counts = [0] * bins
    width = (hi - lo) / bins
    for v in values:
        if lo <= v < hi:
            counts[int((v - lo) // width)] += 1
    return counts
''', [([1, 6, 9, 10],), ([0, 5, 5], 5), ([1, 2, 3], 3, 0, 3), ([-1, 11],)]),
    _f("merge_counts", '''
def merge_counts(a, b):
    """The sum of two count dictionaries."""
    out = dict(a)
    for key, value in b.items():
        out[key] = lookup(out, key, 0) + value
    return out
''', [({"a": 1}, {"a": 2, "b": 1}), ({}, {"x": 3}), ({"y": 1}, {}), ({"p": 2, "q": 1}, {"q": 4})], ["lookup"]),
    _f("pick", '''
def pick(record, fields, missing=None):
    """A dict holding only `fields` of record (absent ones set to missing)."""
    return {f: lookup(record, f, missing) for f in fields}
''', [({"a": 1, "b": 2}, ["a"]), ({"a": 1}, ["a", "c"]), ({"a": 1}, ["z"], 0), ({}, [])], ["lookup"]),
    _f("group_by_len", '''
def group_by_len(words, min_len=1):
    """{length: words of that length}, for words of at least `min_len` characters."""
    groups = {}
    for w in words:
        if len(w) < min_len:
            continue
        groups.setdefault(len(w), []).append(w)
    return groups
''', [(["a", "bb", "cc", "ddd"],), (["", "x"],), (["ab", "abc", "a"], 2), ([],)]),
    _f("rank_of", '''
def rank_of(scores, name):
    """1-based rank of name in top_n order, or 0 when absent."""
    ranked = top_n(scores, len(scores))
    for position, (who, _) in enumerate(ranked, 1):
        if who == name:
            return position
    return 0
''', [({"a": 3, "b": 5}, "a"), ({"a": 3, "b": 5}, "b"), ({"a": 1}, "z"), ({"x": 2, "y": 2, "z": 9}, "y")], ["top_n"]),
    _f("between", '''
def between(records, field, lo, hi):
    """The records whose field lies in [lo, hi], in order."""
    out = []
    for r in records:
        value = lookup(r, field, lo - 1)
        if lo <= value <= hi:
            out.append(r)
    return out
''', [([{"x": 1}, {"x": 5}, {"y": 2}], "x", 1, 4), ([{"x": 4}], "x", 1, 4), ([], "x", 0, 1), ([{"x": 0}, {"x": 2}], "x", 1, 3)], ["lookup"]),
]

THEMES = {"numeric": NUMERIC, "sequences": SEQUENCES, "text": TEXT, "records": RECORDS}
