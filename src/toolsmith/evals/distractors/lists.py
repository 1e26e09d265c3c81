"""Distractor tools on lists: descriptive statistics of numbers, and list manipulation."""

from __future__ import annotations

from toolsmith.evals.distractors.kit import Distractor, tool

S = "list-statistics"
L = "list-utilities"
NUMBERS = ("numbers", "The numbers.")
ITEMS = ("list", "The list of items.")

TOOLS: tuple[Distractor, ...] = (
    tool(S, "describe_numbers", "Summary statistics of a list of numbers: count, mean, median, min, max, stdev.",
         {"values": NUMBERS},
         '''
         import statistics

         def run(values):
             stdev = statistics.stdev(values) if len(values) > 1 else 0.0
             return {"count": len(values), "mean": statistics.fmean(values), "median": statistics.median(values),
                     "min": min(values), "max": max(values), "stdev": round(stdev, 9)}
         ''',
         {"values": [2, 4, 4, 4, 5, 5, 7, 9]},
         ({"values": [1, 2, 3]}, {"count": 3, "mean": 2.0, "median": 2, "min": 1, "max": 3, "stdev": 1.0})),
    tool(S, "mode_of_values", "The most common value(s) of a list, with how often they occur.",
         {"values": ITEMS},
         '''
         from collections import Counter

         def run(values):
             counts = Counter(map(str, values))
             top = max(counts.values())
             return {"modes": [v for v in dict.fromkeys(map(str, values)) if counts[v] == top], "count": top}
         ''',
         {"values": [1, 2, 2, 3, 3]},
         ({"values": ["a", "b", "a"]}, {"modes": ["a"], "count": 2})),
    tool(S, "variance_population_sample", "Population and sample variance and standard deviation of numbers.",
         {"values": NUMBERS},
         '''
         import statistics

         def run(values):
             return {"pvariance": statistics.pvariance(values), "variance": statistics.variance(values),
                     "pstdev": round(statistics.pstdev(values), 9), "stdev": round(statistics.stdev(values), 9)}
         ''',
         {"values": [2, 4, 4, 4, 5, 5, 7, 9]},
         ({"values": [1, 3]}, {"pvariance": 1.0, "variance": 2.0, "pstdev": 1.0, "stdev": 1.414213562})),
    tool(S, "quantiles_of", "Cut points dividing numbers into n equal groups (quartiles by default).",
         {"values": NUMBERS, "groups": ("integer", "How many groups (4 for quartiles).", 4)},
         '''
         import statistics

         def run(values, groups=4):
             return {"cut_points": statistics.quantiles(values, n=groups, method="inclusive")}
         ''',
         {"values": [1, 2, 3, 4, 5, 6, 7, 8, 9], "groups": 10},
         ({"values": [1, 2, 3, 4, 5]}, {"cut_points": [2.0, 3.0, 4.0]})),
    tool(S, "percentile_rank", "The percentile rank of a score among a list of scores.",
         {"values": NUMBERS, "score": ("number", "The score to rank.")},
         '''
         def run(values, score):
             below = sum(v < score for v in values)
             equal = sum(v == score for v in values)
             return {"percentile": round(100 * (below + 0.5 * equal) / len(values), 4)}
         ''',
         {"values": [55, 60, 70, 70, 80, 90], "score": 70},
         ({"values": [1, 2, 3, 4], "score": 3}, {"percentile": 62.5})),
    tool(S, "z_scores", "Standardise numbers to z-scores (population standard deviation).",
         {"values": NUMBERS},
         '''
         import statistics

         def run(values):
             mean, sd = statistics.fmean(values), statistics.pstdev(values)
             if sd == 0:
                 raise ValueError("all values are equal")
             return {"z": [round((v - mean) / sd, 6) for v in values]}
         ''',
         {"values": [10, 12, 23, 23, 16, 23, 21, 16]},
         ({"values": [1, 3]}, {"z": [-1.0, 1.0]})),
    tool(S, "min_max_scale", "Rescale numbers linearly to a new range (0 to 1 by default).",
         {"values": NUMBERS, "low": ("number", "New minimum.", 0), "high": ("number", "New maximum.", 1)},
         '''
         def run(values, low=0, high=1):
             lo, hi = min(values), max(values)
             if lo == hi:
                 raise ValueError("all values are equal")
             return {"scaled": [round(low + (v - lo) * (high - low) / (hi - lo), 9) for v in values]}
         ''',
         {"values": [3, 7, 11, 15]},
         ({"values": [0, 5, 10], "low": -1}, {"scaled": [-1.0, 0.0, 1.0]})),
    tool(S, "moving_average", "Simple moving average of a series over a window.",
         {"values": NUMBERS, "window": ("integer", "Window length.", 3)},
         '''
         def run(values, window=3):
             if window < 1 or window > len(values):
                 raise ValueError("the window must be between 1 and the series length")
             return {"averages": [round(sum(values[i:i + window]) / window, 9) for i in range(len(values) - window + 1)]}
         ''',
         {"values": [1, 3, 5, 7, 9, 11], "window": 2},
         ({"values": [1, 2, 3, 4]}, {"averages": [2.0, 3.0]})),
    tool(S, "exponential_smoothing", "Exponentially smoothed series with a smoothing factor alpha.",
         {"values": NUMBERS, "alpha": ("number", "Smoothing factor between 0 and 1.", 0.5)},
         '''
         def run(values, alpha=0.5):
             smoothed = [values[0]]
             for v in values[1:]:
                 smoothed.append(alpha * v + (1 - alpha) * smoothed[-1])
             return {"smoothed": [round(s, 9) for s in smoothed]}
         ''',
         {"values": [3, 10, 12, 13, 12], "alpha": 0.3},
         ({"values": [0, 10, 10]}, {"smoothed": [0.0, 5.0, 7.5]})),
    tool(S, "cumulative_sum", "Running totals of a list of numbers.",
         {"values": NUMBERS},
         '''
         from itertools import accumulate

         def run(values):
             return {"totals": list(accumulate(values))}
         ''',
         {"values": [5, -2, 8, 1]},
         ({"values": [1, 2, 3]}, {"totals": [1, 3, 6]})),
    tool(S, "pearson_correlation", "Pearson correlation coefficient of two equal-length lists of numbers.",
         {"x": ("numbers", "First variable."), "y": ("numbers", "Second variable.")},
         '''
         import statistics

         def run(x, y):
             return {"r": round(statistics.correlation(x, y), 9)}
         ''',
         {"x": [1, 2, 3, 4, 5], "y": [2, 4, 5, 4, 5]},
         ({"x": [1, 2, 3], "y": [3, 2, 1]}, {"r": -1.0})),
    tool(S, "spearman_rank_correlation", "Spearman rank correlation of two lists (ties get average ranks).",
         {"x": ("numbers", "First variable."), "y": ("numbers", "Second variable.")},
         '''
         import statistics

         def ranks(values):
             order = sorted(range(len(values)), key=values.__getitem__)
             out = [0.0] * len(values)
             i = 0
             while i < len(order):
                 j = i
                 while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
                     j += 1
                 for k in range(i, j + 1):
                     out[order[k]] = (i + j) / 2 + 1
                 i = j + 1
             return out

         def run(x, y):
             return {"rho": round(statistics.correlation(ranks(x), ranks(y)), 9)}
         ''',
         {"x": [10, 20, 30, 40], "y": [1, 3, 2, 4]},
         ({"x": [1, 2, 3], "y": [10, 20, 30]}, {"rho": 1.0})),
    tool(S, "linear_fit", "Least-squares straight line y = slope·x + intercept through points.",
         {"x": ("numbers", "x values."), "y": ("numbers", "y values.")},
         '''
         import statistics

         def run(x, y):
             fit = statistics.linear_regression(x, y)
             return {"slope": round(fit.slope, 9), "intercept": round(fit.intercept, 9)}
         ''',
         {"x": [1, 2, 3, 4], "y": [3, 5, 7, 10]},
         ({"x": [0, 1, 2], "y": [1, 3, 5]}, {"slope": 2.0, "intercept": 1.0})),
    tool(S, "geometric_harmonic_mean", "Geometric and harmonic means of positive numbers.",
         {"values": NUMBERS},
         '''
         import statistics

         def run(values):
             return {"geometric": round(statistics.geometric_mean(values), 9),
                     "harmonic": round(statistics.harmonic_mean(values), 9)}
         ''',
         {"values": [1.5, 2, 8]},
         ({"values": [1, 4]}, {"geometric": 2.0, "harmonic": 1.6})),
    tool(S, "weighted_mean", "The weighted average of values with weights.",
         {"values": NUMBERS, "weights": ("numbers", "One weight per value.")},
         '''
         def run(values, weights):
             if len(values) != len(weights) or not sum(weights):
                 raise ValueError("need one weight per value and a non-zero total weight")
             return {"mean": round(sum(v * w for v, w in zip(values, weights)) / sum(weights), 9)}
         ''',
         {"values": [80, 90, 70], "weights": [0.2, 0.5, 0.3]},
         ({"values": [1, 3], "weights": [1, 1]}, {"mean": 2.0})),
    tool(S, "iqr_outliers", "Outliers of a list by Tukey's rule (beyond 1.5 IQR from the quartiles).",
         {"values": NUMBERS, "factor": ("number", "IQR multiple.", 1.5)},
         '''
         import statistics

         def run(values, factor=1.5):
             q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
             spread = q3 - q1
             low, high = q1 - factor * spread, q3 + factor * spread
             return {"q1": q1, "q3": q3, "outliers": [v for v in values if v < low or v > high]}
         ''',
         {"values": [10, 12, 12, 13, 12, 11, 14, 13, 15, 10, 10, 100]},
         ({"values": [1, 2, 3, 4, 50]}, {"q1": 2.0, "q3": 4.0, "outliers": [50]})),
    tool(S, "histogram_bins", "Count numbers into equal-width bins between their min and max.",
         {"values": NUMBERS, "bins": ("integer", "How many bins.", 5)},
         '''
         def run(values, bins=5):
             lo, hi = min(values), max(values)
             width = (hi - lo) / bins or 1
             counts = [0] * bins
             for v in values:
                 counts[min(int((v - lo) / width), bins - 1)] += 1
             edges = [round(lo + i * width, 9) for i in range(bins + 1)]
             return {"edges": edges, "counts": counts}
         ''',
         {"values": [1, 2, 2, 3, 3, 3, 4, 4, 5], "bins": 4},
         ({"values": [0, 1, 2, 3], "bins": 2}, {"edges": [0.0, 1.5, 3.0], "counts": [2, 2]})),
    tool(S, "normal_distribution", "Normal distribution: CDF, PDF and the value at a given probability.",
         {"mean": ("number", "The mean.", 0), "stdev": ("number", "The standard deviation.", 1),
          "x": ("number", "Point for the CDF and PDF."), "p": ("number", "Probability for the inverse CDF.", 0.5)},
         '''
         from statistics import NormalDist

         def run(x, mean=0, stdev=1, p=0.5):
             d = NormalDist(mean, stdev)
             return {"cdf": round(d.cdf(x), 9), "pdf": round(d.pdf(x), 9), "inverse": round(d.inv_cdf(p), 9)}
         ''',
         {"x": 1.96, "p": 0.975},
         ({"x": 0}, {"cdf": 0.5, "pdf": 0.39894228, "inverse": 0.0})),
    tool(S, "dice_sum_probability", "Probability of each total when rolling several dice.",
         {"dice": ("integer", "How many dice.", 2), "sides": ("integer", "Sides per die.", 6)},
         '''
         from collections import Counter
         from itertools import product

         def run(dice=2, sides=6):
             if sides ** dice > 2_000_000:
                 raise ValueError("too many outcomes")
             counts = Counter(sum(roll) for roll in product(range(1, sides + 1), repeat=dice))
             total = sides ** dice
             return {"probabilities": {str(k): round(v / total, 9) for k, v in sorted(counts.items())}}
         ''',
         {"dice": 3},
         ({"dice": 1, "sides": 4}, {"probabilities": {"1": 0.25, "2": 0.25, "3": 0.25, "4": 0.25}})),
    tool(L, "unique_in_order", "Remove duplicates from a list, keeping the first occurrence of each.",
         {"items": ITEMS},
         '''
         def run(items):
             seen, out = set(), []
             for item in items:
                 key = repr(item)
                 if key not in seen:
                     seen.add(key)
                     out.append(item)
             return {"items": out, "removed": len(items) - len(out)}
         ''',
         {"items": [3, 1, 3, 2, 1]},
         ({"items": ["a", "a"]}, {"items": ["a"], "removed": 1})),
    tool(L, "chunk_list", "Split a list into consecutive chunks of a given size.",
         {"items": ITEMS, "size": ("integer", "Chunk size.")},
         '''
         def run(items, size):
             if size < 1:
                 raise ValueError("size must be at least 1")
             return {"chunks": [items[i:i + size] for i in range(0, len(items), size)]}
         ''',
         {"items": [1, 2, 3, 4, 5, 6, 7], "size": 3},
         ({"items": ["a", "b", "c"], "size": 2}, {"chunks": [["a", "b"], ["c"]]})),
    tool(L, "flatten_list", "Flatten nested lists to one level (or to a given depth).",
         {"items": ITEMS, "depth": ("integer", "Levels to flatten; -1 for all.", -1)},
         '''
         def run(items, depth=-1):
             def flat(xs, d):
                 for x in xs:
                     if isinstance(x, list) and d != 0:
                         yield from flat(x, d - 1)
                     else:
                         yield x
             return {"items": list(flat(items, depth))}
         ''',
         {"items": [1, [2, [3, [4]]]]},
         ({"items": [1, [2, [3]]], "depth": 1}, {"items": [1, 2, [3]]})),
    tool(L, "transpose_table", "Transpose a table given as a list of rows.",
         {"rows": ("list", "Rows of equal length.")},
         '''
         def run(rows):
             return {"rows": [list(col) for col in zip(*rows)]}
         ''',
         {"rows": [[1, 2, 3], [4, 5, 6]]},
         ({"rows": [["a", "b"]]}, {"rows": [["a"], ["b"]]})),
    tool(L, "rotate_list", "Rotate a list by k places (positive to the right).",
         {"items": ITEMS, "k": ("integer", "Places to rotate.")},
         '''
         def run(items, k):
             if not items:
                 return {"items": []}
             k %= len(items)
             return {"items": items[-k:] + items[:-k] if k else list(items)}
         ''',
         {"items": [1, 2, 3, 4, 5], "k": 2},
         ({"items": ["a", "b", "c"], "k": -1}, {"items": ["b", "c", "a"]})),
    tool(L, "set_operations", "Union, intersection and differences of two lists treated as sets.",
         {"first": ("list", "The first list."), "second": ("list", "The second list.")},
         '''
         def run(first, second):
             a, b = list(dict.fromkeys(first)), list(dict.fromkeys(second))
             return {"union": a + [x for x in b if x not in a], "intersection": [x for x in a if x in b],
                     "only_first": [x for x in a if x not in b], "only_second": [x for x in b if x not in a]}
         ''',
         {"first": [1, 2, 3, 4], "second": [3, 4, 5]},
         ({"first": ["a"], "second": ["b"]}, {"union": ["a", "b"], "intersection": [], "only_first": ["a"],
                                                 "only_second": ["b"]})),
    tool(L, "most_common_items", "The most frequent items of a list with their counts.",
         {"items": ("strings", "The items."), "top": ("integer", "How many.", 3)},
         '''
         from collections import Counter

         def run(items, top=3):
             return {"items": [[item, n] for item, n in Counter(items).most_common(top)]}
         ''',
         {"items": ["red", "blue", "red", "green", "blue", "red"]},
         ({"items": ["x", "y", "x"], "top": 1}, {"items": [["x", 2]]})),
    tool(L, "sort_records", "Sort a list of objects by one or more keys, ascending or descending.",
         {"records": ("list", "Objects to sort."), "keys": ("strings", "Keys to sort by, in priority order."),
          "descending": ("boolean", "Sort descending.", False)},
         '''
         def run(records, keys, descending=False):
             return {"records": sorted(records, key=lambda r: [r.get(k) for k in keys], reverse=descending)}
         ''',
         {"records": [{"name": "b", "age": 30}, {"name": "a", "age": 25}], "keys": ["age"]},
         ({"records": [{"n": 1}, {"n": 3}, {"n": 2}], "keys": ["n"], "descending": True},
          {"records": [{"n": 3}, {"n": 2}, {"n": 1}]})),
    tool(L, "group_records", "Group a list of objects by the value of one key, with counts.",
         {"records": ("list", "Objects to group."), "key": ("string", "The key to group by.")},
         '''
         def run(records, key):
             groups = {}
             for r in records:
                 groups.setdefault(str(r.get(key)), []).append(r)
             return {"groups": groups, "counts": {k: len(v) for k, v in groups.items()}}
         ''',
         {"records": [{"team": "red", "p": 1}, {"team": "blue", "p": 2}, {"team": "red", "p": 3}], "key": "team"},
         ({"records": [{"k": 1}], "key": "k"}, {"groups": {"1": [{"k": 1}]}, "counts": {"1": 1}})),
    tool(L, "merge_sorted", "Merge several sorted lists of numbers into one sorted list.",
         {"lists": ("list", "The sorted lists.")},
         '''
         import heapq

         def run(lists):
             return {"merged": list(heapq.merge(*lists))}
         ''',
         {"lists": [[1, 4, 9], [2, 3, 10], [5]]},
         ({"lists": [[1], [0, 2]]}, {"merged": [0, 1, 2]})),
    tool(L, "binary_search", "Find where a value is (or would be inserted) in a sorted list.",
         {"items": NUMBERS, "value": ("number", "The value to find.")},
         '''
         import bisect

         def run(items, value):
             i = bisect.bisect_left(items, value)
             return {"index": i, "found": i < len(items) and items[i] == value}
         ''',
         {"items": [1, 3, 5, 7, 9, 11], "value": 7},
         ({"items": [1, 3, 5], "value": 4}, {"index": 2, "found": False})),
    tool(L, "sliding_windows", "All consecutive windows of a given length over a list.",
         {"items": ITEMS, "size": ("integer", "Window length.")},
         '''
         def run(items, size):
             return {"windows": [items[i:i + size] for i in range(len(items) - size + 1)]}
         ''',
         {"items": [1, 2, 3, 4, 5], "size": 3},
         ({"items": ["a", "b", "c"], "size": 2}, {"windows": [["a", "b"], ["b", "c"]]})),
    tool(L, "list_permutations", "All orderings of a short list (up to 8 items).",
         {"items": ITEMS, "length": ("integer", "Length of each ordering; 0 for all items.", 0)},
         '''
         from itertools import permutations

         def run(items, length=0):
             if len(items) > 8:
                 raise ValueError("at most 8 items")
             found = [list(p) for p in permutations(items, length or None)]
             return {"count": len(found), "permutations": found}
         ''',
         {"items": ["a", "b", "c", "d"], "length": 2},
         ({"items": [1, 2]}, {"count": 2, "permutations": [[1, 2], [2, 1]]})),
    tool(L, "list_combinations", "All combinations of k items from a list (order does not matter).",
         {"items": ITEMS, "k": ("integer", "Items per combination.")},
         '''
         from itertools import combinations

         def run(items, k):
             found = [list(c) for c in combinations(items, k)]
             if len(found) > 10000:
                 raise ValueError("too many combinations")
             return {"count": len(found), "combinations": found}
         ''',
         {"items": ["red", "green", "blue", "black"], "k": 3},
         ({"items": [1, 2, 3], "k": 2}, {"count": 3, "combinations": [[1, 2], [1, 3], [2, 3]]})),
    tool(L, "power_set", "All subsets of a small list (up to 12 items).",
         {"items": ITEMS},
         '''
         from itertools import chain, combinations

         def run(items):
             if len(items) > 12:
                 raise ValueError("at most 12 items")
             subsets = [list(c) for c in chain.from_iterable(combinations(items, r) for r in range(len(items) + 1))]
             return {"count": len(subsets), "subsets": subsets}
         ''',
         {"items": ["x", "y", "z"]},
         ({"items": [1]}, {"count": 2, "subsets": [[], [1]]})),
    tool(L, "cartesian_product", "The Cartesian product of several lists.",
         {"lists": ("list", "The lists.")},
         '''
         from itertools import product

         def run(lists):
             found = [list(p) for p in product(*lists)]
             if len(found) > 10000:
                 raise ValueError("too many combinations")
             return {"count": len(found), "product": found}
         ''',
         {"lists": [["S", "M", "L"], ["red", "blue"]]},
         ({"lists": [[1, 2], ["a"]]}, {"count": 2, "product": [[1, "a"], [2, "a"]]})),
    tool(L, "longest_increasing_run", "The longest strictly increasing subsequence of numbers.",
         {"values": NUMBERS},
         '''
         import bisect

         def run(values):
             tails, tail_index, parent = [], [], [None] * len(values)
             for i, v in enumerate(values):
                 j = bisect.bisect_left(tails, v)
                 if j == len(tails):
                     tails.append(v)
                     tail_index.append(i)
                 else:
                     tails[j], tail_index[j] = v, i
                 parent[i] = tail_index[j - 1] if j else None
             seq, k = [], tail_index[-1] if tail_index else None
             while k is not None:
                 seq.append(values[k])
                 k = parent[k]
             return {"subsequence": seq[::-1], "length": len(seq)}
         ''',
         {"values": [10, 9, 2, 5, 3, 7, 101, 18]},
         ({"values": [3, 1, 2]}, {"subsequence": [1, 2], "length": 2})),
    tool(L, "max_subarray", "The contiguous slice with the largest sum (Kadane's algorithm).",
         {"values": NUMBERS},
         '''
         def run(values):
             best, best_start, best_end = values[0], 0, 1
             current, start = 0, 0
             for i, v in enumerate(values):
                 if current <= 0:
                     current, start = v, i
                 else:
                     current += v
                 if current > best:
                     best, best_start, best_end = current, start, i + 1
             return {"sum": best, "slice": values[best_start:best_end]}
         ''',
         {"values": [-2, 1, -3, 4, -1, 2, 1, -5, 4]},
         ({"values": [-3, -1, -2]}, {"sum": -1, "slice": [-1]})),
    tool(L, "two_sum_pairs", "All index pairs of a list whose numbers add up to a target.",
         {"values": NUMBERS, "target": ("number", "The target sum.")},
         '''
         def run(values, target):
             pairs = [[i, j] for i in range(len(values)) for j in range(i + 1, len(values))
                      if values[i] + values[j] == target]
             return {"pairs": pairs}
         ''',
         {"values": [2, 7, 11, 15, 4, 5], "target": 9},
         ({"values": [1, 2, 3], "target": 4}, {"pairs": [[0, 2]]})),
    tool(L, "knapsack_best", "Best total value of items within a weight limit (0/1 knapsack).",
         {"weights": ("integers", "Item weights."), "values": ("numbers", "Item values."),
          "capacity": ("integer", "Weight limit.")},
         '''
         def run(weights, values, capacity):
             best = [0] * (capacity + 1)
             chosen = [[] for _ in range(capacity + 1)]
             for i, (w, v) in enumerate(zip(weights, values)):
                 for c in range(capacity, w - 1, -1):
                     if best[c - w] + v > best[c]:
                         best[c], chosen[c] = best[c - w] + v, chosen[c - w] + [i]
             return {"value": best[capacity], "items": chosen[capacity]}
         ''',
         {"weights": [1, 3, 4, 5], "values": [1, 4, 5, 7], "capacity": 7},
         ({"weights": [2, 2], "values": [3, 4], "capacity": 2}, {"value": 4, "items": [1]})),
)  # fmt: skip
