"""Distractor tools on whole numbers: number theory, combinatorics, bases and bits."""

from __future__ import annotations

from toolsmith.evals.distractors.kit import Distractor, tool

N = "number-theory"
B = "bits"
NUM = ("integer", "The number.")

TOOLS: tuple[Distractor, ...] = (
    tool(N, "prime_factors", "Factorise a positive integer into primes, with multiplicities.",
         {"n": NUM},
         '''
         def run(n):
             if n < 2:
                 raise ValueError("n must be at least 2")
             factors, d = {}, 2
             while d * d <= n:
                 while n % d == 0:
                     factors[d] = factors.get(d, 0) + 1
                     n //= d
                 d += 1
             if n > 1:
                 factors[n] = factors.get(n, 0) + 1
             return {"factors": [[p, k] for p, k in sorted(factors.items())]}
         ''',
         {"n": 360},
         ({"n": 97}, {"factors": [[97, 1]]}), ({"n": 12}, {"factors": [[2, 2], [3, 1]]})),
    tool(N, "is_prime", "Check whether an integer is prime (deterministic Miller-Rabin for 64-bit numbers).",
         {"n": NUM},
         '''
         def run(n):
             if n < 2:
                 return {"prime": False}
             small = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37]
             for p in small:
                 if n % p == 0:
                     return {"prime": n == p}
             d, r = n - 1, 0
             while d % 2 == 0:
                 d, r = d // 2, r + 1
             for a in small:
                 x = pow(a, d, n)
                 if x in (1, n - 1):
                     continue
                 for _ in range(r - 1):
                     x = pow(x, 2, n)
                     if x == n - 1:
                         break
                 else:
                     return {"prime": False}
             return {"prime": True}
         ''',
         {"n": 1000003},
         ({"n": 561}, {"prime": False}), ({"n": 2147483647}, {"prime": True})),
    tool(N, "nth_prime", "The n-th prime number (the 1st is 2).",
         {"n": ("integer", "Which prime, counting from 1.")},
         '''
         import math

         def run(n):
             if n < 1:
                 raise ValueError("n must be at least 1")
             limit = max(15, int(n * (math.log(n) + math.log(math.log(n + 2)))) + 10)
             sieve = bytearray([1]) * (limit + 1)
             sieve[0:2] = b"\\x00\\x00"
             for i in range(2, int(limit ** 0.5) + 1):
                 if sieve[i]:
                     sieve[i * i :: i] = bytearray(len(sieve[i * i :: i]))
             primes = [i for i, flag in enumerate(sieve) if flag]
             return {"prime": primes[n - 1]}
         ''',
         {"n": 1000},
         ({"n": 1}, {"prime": 2}), ({"n": 10}, {"prime": 29})),
    tool(N, "primes_between", "All prime numbers in a range, and how many there are.",
         {"start": ("integer", "Lower bound (included)."), "end": ("integer", "Upper bound (included).")},
         '''
         def run(start, end):
             if end - start > 1_000_000:
                 raise ValueError("the range is too large")
             sieve = bytearray([1]) * (end + 1)
             sieve[0:2] = b"\\x00\\x00"[: end + 1]
             for i in range(2, int(end ** 0.5) + 1):
                 if sieve[i]:
                     sieve[i * i :: i] = bytearray(len(sieve[i * i :: i]))
             primes = [i for i in range(max(start, 0), end + 1) if sieve[i]]
             return {"primes": primes, "count": len(primes)}
         ''',
         {"start": 100, "end": 150},
         ({"start": 10, "end": 20}, {"primes": [11, 13, 17, 19], "count": 4})),
    tool(N, "gcd_lcm", "Greatest common divisor and least common multiple of a list of integers.",
         {"numbers": ("integers", "Two or more integers.")},
         '''
         import math
         from functools import reduce

         def run(numbers):
             return {"gcd": reduce(math.gcd, numbers), "lcm": reduce(lambda a, b: a * b // math.gcd(a, b), numbers)}
         ''',
         {"numbers": [84, 126, 210]},
         ({"numbers": [4, 6]}, {"gcd": 2, "lcm": 12})),
    tool(N, "divisors", "All positive divisors of an integer, their count and their sum.",
         {"n": NUM},
         '''
         def run(n):
             small = [d for d in range(1, int(n ** 0.5) + 1) if n % d == 0]
             found = sorted(set(small + [n // d for d in small]))
             return {"divisors": found, "count": len(found), "sum": sum(found)}
         ''',
         {"n": 360},
         ({"n": 12}, {"divisors": [1, 2, 3, 4, 6, 12], "count": 6, "sum": 28})),
    tool(N, "perfect_number_check", "Classify an integer as perfect, abundant or deficient (sum of proper divisors).",
         {"n": NUM},
         '''
         def run(n):
             total = sum(d for d in range(1, n // 2 + 1) if n % d == 0)
             kind = "perfect" if total == n else "abundant" if total > n else "deficient"
             return {"proper_divisor_sum": total, "kind": kind}
         ''',
         {"n": 496},
         ({"n": 12}, {"proper_divisor_sum": 16, "kind": "abundant"})),
    tool(N, "euler_totient", "Euler's totient φ(n): how many integers up to n are coprime with n.",
         {"n": NUM},
         '''
         def run(n):
             result, m, p = n, n, 2
             while p * p <= m:
                 if m % p == 0:
                     while m % p == 0:
                         m //= p
                     result -= result // p
                 p += 1
             if m > 1:
                 result -= result // m
             return {"phi": result}
         ''',
         {"n": 360},
         ({"n": 9}, {"phi": 6}), ({"n": 13}, {"phi": 12})),
    tool(N, "fibonacci", "The n-th Fibonacci number (F0 = 0, F1 = 1), exact for any size.",
         {"n": ("integer", "The index, from 0.")},
         '''
         def run(n):
             a, b = 0, 1
             for _ in range(n):
                 a, b = b, a + b
             return {"value": str(a), "digits": len(str(a))}
         ''',
         {"n": 300},
         ({"n": 10}, {"value": "55", "digits": 2})),
    tool(N, "factorial_digits", "n! exactly (as text), its number of digits and trailing zeros.",
         {"n": ("integer", "A non-negative integer.")},
         '''
         import math

         def run(n):
             value = str(math.factorial(n))
             return {"value": value, "digits": len(value), "trailing_zeros": len(value) - len(value.rstrip("0"))}
         ''',
         {"n": 52},
         ({"n": 10}, {"value": "3628800", "digits": 7, "trailing_zeros": 2})),
    tool(N, "binomial_coefficient", "Combinations C(n, k) and permutations P(n, k).",
         {"n": ("integer", "Items to choose from."), "k": ("integer", "Items chosen.")},
         '''
         import math

         def run(n, k):
             return {"combinations": math.comb(n, k), "permutations": math.perm(n, k)}
         ''',
         {"n": 49, "k": 6},
         ({"n": 5, "k": 2}, {"combinations": 10, "permutations": 20})),
    tool(N, "catalan_number", "The n-th Catalan number (ways to bracket, binary trees with n nodes...).",
         {"n": ("integer", "The index, from 0.")},
         '''
         import math

         def run(n):
             return {"value": math.comb(2 * n, n) // (n + 1)}
         ''',
         {"n": 15},
         ({"n": 5}, {"value": 42})),
    tool(N, "pascal_triangle_row", "Row n of Pascal's triangle (row 0 is [1]).",
         {"n": ("integer", "The row, from 0.")},
         '''
         import math

         def run(n):
             return {"row": [math.comb(n, k) for k in range(n + 1)]}
         ''',
         {"n": 12},
         ({"n": 4}, {"row": [1, 4, 6, 4, 1]})),
    tool(N, "collatz_steps", "Steps for n to reach 1 in the Collatz (3n+1) sequence, and the peak value.",
         {"n": ("integer", "A positive integer.")},
         '''
         def run(n):
             steps, peak = 0, n
             while n != 1:
                 n = n // 2 if n % 2 == 0 else 3 * n + 1
                 peak, steps = max(peak, n), steps + 1
             return {"steps": steps, "peak": peak}
         ''',
         {"n": 871},
         ({"n": 6}, {"steps": 8, "peak": 16})),
    tool(N, "digit_sum", "Sum of the digits of an integer, and its digital root.",
         {"n": NUM},
         '''
         def run(n):
             total = sum(int(c) for c in str(abs(n)))
             root = 0 if n == 0 else 1 + (abs(n) - 1) % 9
             return {"digit_sum": total, "digital_root": root}
         ''',
         {"n": 987654321},
         ({"n": 493}, {"digit_sum": 16, "digital_root": 7})),
    tool(N, "armstrong_number", "Check whether n is an Armstrong (narcissistic) number.",
         {"n": NUM},
         '''
         def run(n):
             digits = str(n)
             return {"armstrong": n == sum(int(d) ** len(digits) for d in digits)}
         ''',
         {"n": 9474},
         ({"n": 154}, {"armstrong": False}), ({"n": 153}, {"armstrong": True})),
    tool(N, "modular_inverse", "The inverse of a modulo m, if it exists.",
         {"a": ("integer", "The number."), "modulus": ("integer", "The modulus.")},
         '''
         import math

         def run(a, modulus):
             if math.gcd(a, modulus) != 1:
                 return {"inverse": None, "reason": "a and the modulus are not coprime"}
             return {"inverse": pow(a, -1, modulus)}
         ''',
         {"a": 17, "modulus": 3120},
         ({"a": 3, "modulus": 11}, {"inverse": 4})),
    tool(N, "modular_power", "a to the power e, modulo m, computed fast.",
         {"base": ("integer", "The base."), "exponent": ("integer", "The exponent."), "modulus": ("integer", "The modulus.")},
         '''
         def run(base, exponent, modulus):
             return {"value": pow(base, exponent, modulus)}
         ''',
         {"base": 4, "exponent": 13, "modulus": 497},
         ({"base": 2, "exponent": 10, "modulus": 1000}, {"value": 24})),
    tool(N, "chinese_remainder", "Solve x ≡ r_i (mod m_i) for pairwise coprime moduli (Chinese remainder theorem).",
         {"remainders": ("integers", "The remainders r_i."), "moduli": ("integers", "The moduli m_i.")},
         '''
         import math

         def run(remainders, moduli):
             x, m = 0, 1
             for r, mod in zip(remainders, moduli):
                 if math.gcd(m, mod) != 1:
                     raise ValueError("the moduli must be pairwise coprime")
                 x += m * ((r - x) * pow(m, -1, mod) % mod)
                 m *= mod
             return {"x": x % m, "modulus": m}
         ''',
         {"remainders": [2, 3, 2], "moduli": [3, 5, 7]},
         ({"remainders": [1, 2], "moduli": [2, 3]}, {"x": 5, "modulus": 6})),
    tool(N, "integer_sqrt", "Integer square root of n and whether n is a perfect square.",
         {"n": ("integer", "A non-negative integer.")},
         '''
         import math

         def run(n):
             r = math.isqrt(n)
             return {"isqrt": r, "perfect_square": r * r == n}
         ''',
         {"n": 123456789},
         ({"n": 49}, {"isqrt": 7, "perfect_square": True})),
    tool(N, "continued_fraction", "The continued fraction expansion of a fraction p/q.",
         {"numerator": ("integer", "p."), "denominator": ("integer", "q.")},
         '''
         def run(numerator, denominator):
             terms = []
             while denominator:
                 terms.append(numerator // denominator)
                 numerator, denominator = denominator, numerator % denominator
             return {"terms": terms}
         ''',
         {"numerator": 415, "denominator": 93},
         ({"numerator": 3, "denominator": 2}, {"terms": [1, 2]})),
    tool(N, "simplify_fraction", "Reduce a fraction to lowest terms and give it as a mixed number and a decimal.",
         {"numerator": ("integer", "The numerator."), "denominator": ("integer", "The denominator.")},
         '''
         from fractions import Fraction

         def run(numerator, denominator):
             f = Fraction(numerator, denominator)
             whole, rest = divmod(f.numerator, f.denominator)
             mixed = f"{whole} {rest}/{f.denominator}" if whole and rest else str(f)
             return {"fraction": str(f), "mixed": mixed, "decimal": round(float(f), 10)}
         ''',
         {"numerator": 462, "denominator": 1071},
         ({"numerator": 10, "denominator": 4}, {"fraction": "5/2", "mixed": "2 1/2", "decimal": 2.5})),
    tool(N, "decimal_to_fraction", "The simplest fraction close to a decimal, with a bound on the denominator.",
         {"value": ("number", "The decimal."), "max_denominator": ("integer", "Largest denominator.", 1000)},
         '''
         from fractions import Fraction

         def run(value, max_denominator=1000):
             f = Fraction(value).limit_denominator(max_denominator)
             return {"fraction": str(f), "error": abs(float(f) - value)}
         ''',
         {"value": 3.14159265, "max_denominator": 120},
         ({"value": 0.75}, {"fraction": "3/4", "error": 0.0})),
    tool(N, "triangular_number", "The n-th triangular number, and whether a number is triangular.",
         {"n": ("integer", "The index n, or the number to test when check is true."),
          "check": ("boolean", "Test whether n is triangular.", False)},
         '''
         import math

         def run(n, check=False):
             if check:
                 k = (math.isqrt(8 * n + 1) - 1) // 2
                 return {"triangular": k * (k + 1) // 2 == n, "index": k}
             return {"value": n * (n + 1) // 2}
         ''',
         {"n": 365},
         ({"n": 55, "check": True}, {"triangular": True, "index": 10})),
    tool(N, "happy_number", "Check whether n is a happy number (repeated digit-square sums reach 1).",
         {"n": NUM},
         '''
         def run(n):
             seen, path = set(), []
             while n != 1 and n not in seen:
                 seen.add(n)
                 n = sum(int(d) ** 2 for d in str(n))
                 path.append(n)
             return {"happy": n == 1, "path": path}
         ''',
         {"n": 19},
         ({"n": 7}, {"happy": True, "path": [49, 97, 130, 10, 1]})),
    tool(N, "goldbach_pairs", "The ways to write an even number as a sum of two primes.",
         {"n": ("integer", "An even number greater than 2.")},
         '''
         def run(n):
             def prime(k):
                 return k > 1 and all(k % d for d in range(2, int(k ** 0.5) + 1))
             return {"pairs": [[p, n - p] for p in range(2, n // 2 + 1) if prime(p) and prime(n - p)]}
         ''',
         {"n": 100},
         ({"n": 10}, {"pairs": [[3, 7], [5, 5]]})),
    tool(N, "partition_count", "The number of integer partitions of n (ways to write n as a sum).",
         {"n": ("integer", "A non-negative integer.")},
         '''
         def run(n):
             ways = [1] + [0] * n
             for part in range(1, n + 1):
                 for total in range(part, n + 1):
                     ways[total] += ways[total - part]
             return {"partitions": ways[n]}
         ''',
         {"n": 100},
         ({"n": 5}, {"partitions": 7})),
    tool(N, "hanoi_moves", "The moves that solve the Tower of Hanoi for n disks (up to 10).",
         {"disks": ("integer", "How many disks (1 to 10).")},
         '''
         def run(disks):
             if not 1 <= disks <= 10:
                 raise ValueError("disks must be between 1 and 10")
             moves = []

             def move(k, a, b, c):
                 if k:
                     move(k - 1, a, c, b)
                     moves.append([a, c])
                     move(k - 1, b, a, c)

             move(disks, "A", "B", "C")
             return {"count": len(moves), "moves": moves}
         ''',
         {"disks": 4},
         ({"disks": 2}, {"count": 3, "moves": [["A", "B"], ["A", "C"], ["B", "C"]]})),
    tool(B, "base_convert", "Write an integer in another base (2 to 36), or read a number written in a base.",
         {"value": ("string", "The number, as digits in from_base."), "from_base": ("integer", "Its base.", 10),
          "to_base": ("integer", "The base to write it in.", 2)},
         '''
         import string

         def run(value, from_base=10, to_base=2):
             n = int(value, from_base)
             digits = string.digits + string.ascii_lowercase
             sign, n = ("-", -n) if n < 0 else ("", n)
             out = ""
             while True:
                 n, r = divmod(n, to_base)
                 out = digits[r] + out
                 if n == 0:
                     break
             return {"value": sign + out, "decimal": int(value, from_base)}
         ''',
         {"value": "255", "from_base": 10, "to_base": 16},
         ({"value": "ff", "from_base": 16, "to_base": 2}, {"value": "11111111", "decimal": 255})),
    tool(B, "popcount", "Count the 1 bits of a non-negative integer, and its bit length.",
         {"n": ("integer", "A non-negative integer.")},
         '''
         def run(n):
             return {"ones": bin(n).count("1"), "bit_length": n.bit_length(), "binary": bin(n)[2:]}
         ''',
         {"n": 1023},
         ({"n": 10}, {"ones": 2, "bit_length": 4, "binary": "1010"})),
    tool(B, "gray_code", "Convert an integer to its reflected binary Gray code, or a Gray code back.",
         {"n": ("integer", "The number (or Gray code)."), "decode": ("boolean", "Gray code to integer.", False)},
         '''
         def run(n, decode=False):
             if decode:
                 value = 0
                 while n:
                     value ^= n
                     n >>= 1
                 return {"value": value}
             return {"gray": n ^ (n >> 1), "binary": bin(n ^ (n >> 1))[2:]}
         ''',
         {"n": 13},
         ({"n": 7, "decode": True}, {"value": 5})),
    tool(B, "twos_complement", "The two's-complement bit pattern of an integer at a given width, or read one back.",
         {"value": ("integer", "The signed integer."), "bits": ("integer", "The width in bits.", 8)},
         '''
         def run(value, bits=8):
             low, high = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
             if not low <= value <= high:
                 raise ValueError(f"{value} does not fit in {bits} bits")
             pattern = value & ((1 << bits) - 1)
             return {"binary": format(pattern, f"0{bits}b"), "unsigned": pattern, "hex": format(pattern, f"0{bits // 4}x")}
         ''',
         {"value": -42, "bits": 16},
         ({"value": -1}, {"binary": "11111111", "unsigned": 255, "hex": "ff"})),
    tool(B, "bitwise_ops", "AND, OR, XOR of two integers and the shifts of the first, in decimal and binary.",
         {"a": ("integer", "The first integer."), "b": ("integer", "The second integer."),
          "shift": ("integer", "Bits to shift a by.", 1)},
         '''
         def run(a, b, shift=1):
             return {"and": a & b, "or": a | b, "xor": a ^ b, "left": a << shift, "right": a >> shift,
                     "binary": {"a": bin(a), "b": bin(b)}}
         ''',
         {"a": 60, "b": 13, "shift": 2},
         ({"a": 6, "b": 3}, {"and": 2, "or": 7, "xor": 5, "left": 12, "right": 3, "binary": {"a": "0b110", "b": "0b11"}})),
    tool(B, "reverse_bits", "Reverse the bit order of an integer at a given width.",
         {"n": ("integer", "A non-negative integer."), "bits": ("integer", "The width.", 32)},
         '''
         def run(n, bits=32):
             if n >= 1 << bits:
                 raise ValueError(f"{n} does not fit in {bits} bits")
             return {"value": int(format(n, f"0{bits}b")[::-1], 2)}
         ''',
         {"n": 43261596},
         ({"n": 1, "bits": 8}, {"value": 128})),
    tool(B, "ipv4_to_integer", "Convert a dotted IPv4 address to its 32-bit integer, or an integer to dotted form.",
         {"value": ("string", "A dotted address, or a decimal integer.")},
         '''
         import ipaddress

         def run(value):
             if value.strip().isdigit():
                 return {"address": str(ipaddress.IPv4Address(int(value)))}
             return {"integer": int(ipaddress.IPv4Address(value.strip()))}
         ''',
         {"value": "192.168.1.10"},
         ({"value": "16777217"}, {"address": "1.0.0.1"})),
    tool(N, "number_properties", "Parity, sign, and whether an integer is a square, cube, power of two or prime.",
         {"n": NUM},
         '''
         def run(n):
             a = abs(n)
             cube = round(a ** (1 / 3)) if a else 0
             return {"even": n % 2 == 0, "negative": n < 0, "square": n >= 0 and int(a ** 0.5) ** 2 == n,
                     "cube": cube ** 3 == a, "power_of_two": n > 0 and n & (n - 1) == 0,
                     "prime": n > 1 and all(n % d for d in range(2, int(n ** 0.5) + 1))}
         ''',
         {"n": 4096},
         ({"n": 27}, {"even": False, "negative": False, "square": False, "cube": True, "power_of_two": False,
                      "prime": False})),
    tool(N, "lucky_sevens_count", "How many integers in a range contain a given digit (e.g. how many house numbers have a 7).",
         {"start": ("integer", "From (included)."), "end": ("integer", "To (included)."),
          "digit": ("integer", "The digit 0-9.", 7)},
         '''
         def run(start, end, digit=7):
             mark = str(digit)
             return {"count": sum(mark in str(k) for k in range(start, end + 1))}
         ''',
         {"start": 1, "end": 1000},
         ({"start": 1, "end": 20, "digit": 1}, {"count": 11})),
)  # fmt: skip
