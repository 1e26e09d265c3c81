"""Distractor tools on bytes and encodings: hashes, checksums, base-N, escapes, compression."""

from __future__ import annotations

from toolsmith.evals.distractors.kit import Distractor, tool

H = "hashing"
E = "encoding"
TEXT = ("string", "The text (encoded as UTF-8).")

TOOLS: tuple[Distractor, ...] = (
    tool(H, "hash_text", "Hash a text with a hashlib algorithm (md5, sha1, sha256, sha512, sha3_256, blake2b...).",
         {"text": TEXT, "algorithm": ("string", "The hashlib algorithm name.", "sha256")},
         '''
         import hashlib

         def run(text, algorithm="sha256"):
             if algorithm not in hashlib.algorithms_available:
                 raise ValueError(f"unknown algorithm {algorithm!r}")
             digest = hashlib.new(algorithm, text.encode("utf-8"))
             return {"algorithm": algorithm, "hex": digest.hexdigest()}
         ''',
         {"text": "hello world", "algorithm": "sha1"},
         ({"text": "abc", "algorithm": "md5"}, {"algorithm": "md5", "hex": "900150983cd24fb0d6963f7d28e17f72"})),
    tool(H, "hmac_signature", "An HMAC signature of a message with a secret key (hex), e.g. to check a webhook.",
         {"message": ("string", "The message."), "key": ("string", "The shared secret."),
          "algorithm": ("string", "The hash algorithm.", "sha256")},
         '''
         import hashlib
         import hmac

         def run(message, key, algorithm="sha256"):
             mac = hmac.new(key.encode("utf-8"), message.encode("utf-8"), getattr(hashlib, algorithm))
             return {"hex": mac.hexdigest()}
         ''',
         {"message": "The quick brown fox jumps over the lazy dog", "key": "key"},
         ({"message": "The quick brown fox jumps over the lazy dog", "key": "key", "algorithm": "md5"},
          {"hex": "80070713463e7749b90c2dc24911e275"})),
    tool(H, "crc32_checksum", "The CRC-32 checksum of a text, as an unsigned integer and in hex.",
         {"text": TEXT},
         '''
         import zlib

         def run(text):
             value = zlib.crc32(text.encode("utf-8"))
             return {"crc32": value, "hex": f"{value:08x}"}
         ''',
         {"text": "The quick brown fox jumps over the lazy dog"},
         ({"text": "123456789"}, {"crc32": 3421780262, "hex": "cbf43926"})),
    tool(H, "adler32_checksum", "The Adler-32 checksum of a text.",
         {"text": TEXT},
         '''
         import zlib

         def run(text):
             value = zlib.adler32(text.encode("utf-8"))
             return {"adler32": value, "hex": f"{value:08x}"}
         ''',
         {"text": "Wikipedia"},
         ({"text": "Wikipedia"}, {"adler32": 300286872, "hex": "11e60398"})),
    tool(H, "pbkdf2_key", "Derive a key from a password with PBKDF2-HMAC (hex output).",
         {"password": ("string", "The password."), "salt": ("string", "The salt."),
          "iterations": ("integer", "PBKDF2 iterations.", 100000), "length": ("integer", "Key length in bytes.", 32)},
         '''
         import hashlib

         def run(password, salt, iterations=100000, length=32):
             key = hashlib.pbkdf2_hmac("sha256", password.encode(), salt.encode(), iterations, dklen=length)
             return {"key": key.hex()}
         ''',
         {"password": "password", "salt": "salt", "iterations": 1},
         ({"password": "password", "salt": "salt", "iterations": 2, "length": 20},
          {"key": "ae4d0c95af6b46d32d0adff928f06dd02a303f8e"})),
    tool(H, "uuid_from_name", "A name-based UUID (version 3 or 5) for a name in the DNS, URL, OID or X.500 namespace.",
         {"name": ("string", "The name."), "namespace": ("string", "dns, url, oid or x500.", "dns"),
          "version": ("integer", "3 (MD5) or 5 (SHA-1).", 5)},
         '''
         import uuid

         def run(name, namespace="dns", version=5):
             space = {"dns": uuid.NAMESPACE_DNS, "url": uuid.NAMESPACE_URL, "oid": uuid.NAMESPACE_OID,
                      "x500": uuid.NAMESPACE_X500}[namespace]
             make = uuid.uuid5 if version == 5 else uuid.uuid3
             return {"uuid": str(make(space, name))}
         ''',
         {"name": "python.org"},
         ({"name": "python.org", "version": 3}, {"uuid": "6fa459ea-ee8a-3ca4-894e-db77e160355e"})),
    tool(H, "luhn_check", "Check a number with the Luhn algorithm (card numbers, IMEIs) and give its check digit.",
         {"number": ("string", "The digits (spaces allowed).")},
         '''
         def run(number):
             digits = [int(c) for c in number if c.isdigit()]
             if not digits:
                 raise ValueError("no digits")

             def total(ds):
                 s = 0
                 for i, d in enumerate(reversed(ds)):
                     if i % 2 == 1:
                         d = d * 2 - 9 if d * 2 > 9 else d * 2
                     s += d
                 return s

             check = (10 - total(digits + [0]) % 10) % 10
             return {"valid": total(digits) % 10 == 0, "check_digit_to_append": check}
         ''',
         {"number": "4539 1488 0343 6467"},
         ({"number": "7992739871"}, {"valid": False, "check_digit_to_append": 3})),
    tool(H, "file_fingerprint", "A short, stable fingerprint of a text: the first characters of its SHA-256 in base32.",
         {"text": TEXT, "length": ("integer", "Characters to keep.", 10)},
         '''
         import base64
         import hashlib

         def run(text, length=10):
             digest = hashlib.sha256(text.encode("utf-8")).digest()
             return {"fingerprint": base64.b32encode(digest).decode().lower()[:length]}
         ''',
         {"text": "my document body"},
         ({"text": "", "length": 4}, {"fingerprint": "4oym"})),
    tool(E, "base64_codec", "Encode text to Base64 (standard or URL-safe), or decode Base64 back to text.",
         {"text": ("string", "Text to encode, or Base64 to decode."), "decode": ("boolean", "Decode.", False),
          "url_safe": ("boolean", "Use the URL-safe alphabet.", False)},
         '''
         import base64

         def run(text, decode=False, url_safe=False):
             enc = base64.urlsafe_b64encode if url_safe else base64.b64encode
             dec = base64.urlsafe_b64decode if url_safe else base64.b64decode
             if decode:
                 return {"text": dec(text.encode()).decode("utf-8")}
             return {"base64": enc(text.encode("utf-8")).decode()}
         ''',
         {"text": "hello world"},
         ({"text": "aGk/", "decode": True}, {"text": "hi?"})),
    tool(E, "base32_codec", "Encode text to Base32, or decode Base32 back to text.",
         {"text": ("string", "Text to encode, or Base32 to decode."), "decode": ("boolean", "Decode.", False)},
         '''
         import base64

         def run(text, decode=False):
             if decode:
                 return {"text": base64.b32decode(text.encode()).decode("utf-8")}
             return {"base32": base64.b32encode(text.encode("utf-8")).decode()}
         ''',
         {"text": "toolsmith"},
         ({"text": "foobar"}, {"base32": "MZXW6YTBOI======"})),
    tool(E, "base85_codec", "Encode text to Ascii85 (Adobe) or Base85 (git), or decode it.",
         {"text": ("string", "Text to encode, or encoded text."), "flavour": ("string", "ascii85 or base85.", "ascii85"),
          "decode": ("boolean", "Decode.", False)},
         '''
         import base64

         def run(text, flavour="ascii85", decode=False):
             enc, dec = (base64.a85encode, base64.a85decode) if flavour == "ascii85" else (base64.b85encode, base64.b85decode)
             if decode:
                 return {"text": dec(text.encode()).decode("utf-8")}
             return {"encoded": enc(text.encode("utf-8")).decode()}
         ''',
         {"text": "Man is distinguished"},
         ({"text": "Man "}, {"encoded": "9jqo^"})),
    tool(E, "hex_codec", "Show text as hexadecimal bytes, or turn hex back into text.",
         {"text": ("string", "Text, or hex digits to decode."), "decode": ("boolean", "Decode hex.", False)},
         '''
         def run(text, decode=False):
             if decode:
                 return {"text": bytes.fromhex(text).decode("utf-8")}
             data = text.encode("utf-8")
             return {"hex": data.hex(), "bytes": len(data)}
         ''',
         {"text": "Grüße"},
         ({"text": "hi"}, {"hex": "6869", "bytes": 2})),
    tool(E, "url_encode", "Percent-encode text for a URL, or decode a percent-encoded string.",
         {"text": ("string", "The text."), "decode": ("boolean", "Decode instead.", False),
          "plus_spaces": ("boolean", "Spaces as + (form encoding).", False)},
         '''
         from urllib.parse import quote, quote_plus, unquote, unquote_plus

         def run(text, decode=False, plus_spaces=False):
             if decode:
                 return {"text": (unquote_plus if plus_spaces else unquote)(text)}
             return {"encoded": quote_plus(text) if plus_spaces else quote(text, safe="")}
         ''',
         {"text": "a b&c=d/é"},
         ({"text": "a+b%21", "decode": True, "plus_spaces": True}, {"text": "a b!"})),
    tool(E, "html_entities", "Escape text for HTML (&, <, >, quotes), or unescape HTML entities.",
         {"text": ("string", "The text."), "unescape": ("boolean", "Unescape entities instead.", False)},
         '''
         import html

         def run(text, unescape=False):
             return {"text": html.unescape(text) if unescape else html.escape(text)}
         ''',
         {"text": '<a href="x">Tom & Jerry</a>'},
         ({"text": "&lt;b&gt; &eacute;", "unescape": True}, {"text": "<b> é"})),
    tool(E, "punycode_domain", "Convert an internationalised domain name to its ASCII (punycode) form and back.",
         {"domain": ("string", "The domain name."), "to_unicode": ("boolean", "Decode xn-- labels.", False)},
         '''
         def run(domain, to_unicode=False):
             if to_unicode:
                 return {"domain": domain.encode("ascii").decode("idna")}
             return {"domain": domain.encode("idna").decode("ascii")}
         ''',
         {"domain": "bücher.example"},
         ({"domain": "münchen.de"}, {"domain": "xn--mnchen-3ya.de"})),
    tool(E, "quoted_printable", "Encode text as quoted-printable (as in e-mail bodies), or decode it.",
         {"text": ("string", "The text."), "decode": ("boolean", "Decode instead.", False)},
         '''
         import quopri

         def run(text, decode=False):
             if decode:
                 return {"text": quopri.decodestring(text.encode()).decode("utf-8")}
             return {"encoded": quopri.encodestring(text.encode("utf-8")).decode()}
         ''',
         {"text": "café"},
         ({"text": "caf=C3=A9", "decode": True}, {"text": "café"})),
    tool(E, "utf8_bytes", "The UTF-8, UTF-16 and UTF-32 byte lengths of a text, and its UTF-8 bytes in hex.",
         {"text": TEXT},
         '''
         def run(text):
             return {"utf8": len(text.encode("utf-8")), "utf16": len(text.encode("utf-16-le")),
                     "utf32": len(text.encode("utf-32-le")), "utf8_hex": text.encode("utf-8").hex(" ")}
         ''',
         {"text": "naïve ☃"},
         ({"text": "é"}, {"utf8": 2, "utf16": 2, "utf32": 4, "utf8_hex": "c3 a9"})),
    tool(E, "json_string_escape", "Escape a text as a JSON string literal, or unescape a JSON string literal.",
         {"text": ("string", "The text."), "unescape": ("boolean", "Parse a JSON string literal instead.", False)},
         '''
         import json

         def run(text, unescape=False):
             if unescape:
                 value = json.loads(text)
                 if not isinstance(value, str):
                     raise ValueError("not a JSON string literal")
                 return {"text": value}
             return {"literal": json.dumps(text)}
         ''',
         {"text": 'line1\nline "2"'},
         ({"text": '"a\\u00e9"', "unescape": True}, {"text": "aé"})),
    tool(E, "compress_ratio", "How well a text compresses with zlib, bz2 and lzma (compressed sizes in bytes).",
         {"text": TEXT},
         '''
         import bz2
         import lzma
         import zlib

         def run(text):
             data = text.encode("utf-8")
             sizes = {"zlib": len(zlib.compress(data, 9)), "bz2": len(bz2.compress(data)), "lzma": len(lzma.compress(data))}
             return {"original": len(data), "compressed": sizes, "best": min(sizes, key=sizes.get)}
         ''',
         {"text": "abc" * 200},
         ({"text": ""}, {"original": 0, "compressed": {"zlib": 8, "bz2": 14, "lzma": 32}, "best": "zlib"})),
    tool(E, "gzip_base64", "Gzip a text and give the result as Base64, or reverse it.",
         {"text": ("string", "Text, or Base64 gzip data to decode."), "decode": ("boolean", "Decode.", False)},
         '''
         import base64
         import gzip

         def run(text, decode=False):
             if decode:
                 return {"text": gzip.decompress(base64.b64decode(text)).decode("utf-8")}
             return {"base64": base64.b64encode(gzip.compress(text.encode("utf-8"), mtime=0)).decode()}
         ''',
         {"text": "hello hello hello"},
         ({"text": "H4sIAAAAAAAC/8tIzcnJBwCGphA2BQAAAA==", "decode": True}, {"text": "hello"})),
    tool(E, "text_to_binary", "Write text as 8-bit binary groups, or read binary groups back as text.",
         {"text": ("string", "Text, or space-separated 8-bit groups."), "decode": ("boolean", "Decode.", False)},
         '''
         def run(text, decode=False):
             if decode:
                 return {"text": bytes(int(b, 2) for b in text.split()).decode("utf-8")}
             return {"binary": " ".join(f"{b:08b}" for b in text.encode("utf-8"))}
         ''',
         {"text": "Hi!"},
         ({"text": "01101111 01101011", "decode": True}, {"text": "ok"})),
    tool(E, "bytes_humanize", "Write a byte count in human units (KiB/MiB/GiB or kB/MB/GB).",
         {"size": ("integer", "The number of bytes."), "binary": ("boolean", "Powers of 1024 (KiB).", True)},
         '''
         def run(size, binary=True):
             step = 1024 if binary else 1000
             units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"] if binary else ["B", "kB", "MB", "GB", "TB", "PB"]
             value, unit = float(size), units[0]
             for unit in units:
                 if abs(value) < step or unit == units[-1]:
                     break
                 value /= step
             return {"text": f"{value:.1f} {unit}" if unit != "B" else f"{size} B"}
         ''',
         {"size": 123456789},
         ({"size": 1536}, {"text": "1.5 KiB"}), ({"size": 1500, "binary": False}, {"text": "1.5 kB"})),
    tool(E, "parse_byte_size", "Read a size such as '1.5 GiB', '20MB' or '512 k' as a number of bytes.",
         {"text": ("string", "The size with its unit.")},
         '''
         import re

         def run(text):
             m = re.fullmatch(r"\\s*([\\d.]+)\\s*([kmgtp]?)(i?)(b?)\\s*", text, re.I)
             if not m:
                 raise ValueError(f"cannot read a size from {text!r}")
             power = "kmgtp".find(m.group(2).lower()) + 1 if m.group(2) else 0
             base = 1024 if m.group(3) else 1000
             return {"bytes": int(float(m.group(1)) * base ** power)}
         ''',
         {"text": "1.5 GiB"},
         ({"text": "20MB"}, {"bytes": 20000000}), ({"text": "2 KiB"}, {"bytes": 2048})),
    tool(E, "escape_unicode", "Escape every non-ASCII character of a text as a Python backslash escape (or decode such escapes).",
         {"text": TEXT, "decode": ("boolean", "Decode escapes instead.", False)},
         '''
         def run(text, decode=False):
             if decode:
                 return {"text": text.encode("ascii").decode("unicode_escape")}
             return {"escaped": text.encode("ascii", "backslashreplace").decode("ascii")}
         ''',
         {"text": "naïve café"},
         ({"text": "é"}, {"escaped": "\\xe9"})),
    tool(E, "uuencode_text", "Encode a short text with uuencode's line format (binascii), or decode such a line.",
         {"text": ("string", "Text (at most 45 bytes), or a uuencoded line."), "decode": ("boolean", "Decode.", False)},
         '''
         import binascii

         def run(text, decode=False):
             if decode:
                 return {"text": binascii.a2b_uu(text).decode("utf-8")}
             return {"line": binascii.b2a_uu(text.encode("utf-8")).decode().rstrip("\\n")}
         ''',
         {"text": "Cat"},
         ({"text": "Cat"}, {"line": "#0V%T"})),
    tool(E, "atbash_cipher", "Apply the Atbash cipher (a↔z, b↔y, ...) to the letters of a text.",
         {"text": ("string", "The text.")},
         '''
         import string

         def run(text):
             lower, upper = string.ascii_lowercase, string.ascii_uppercase
             return {"text": text.translate(str.maketrans(lower + upper, lower[::-1] + upper[::-1]))}
         ''',
         {"text": "Wizard of Oz"},
         ({"text": "abc XYZ"}, {"text": "zyx CBA"})),
    tool(E, "nato_spelling", "Spell a text with the NATO phonetic alphabet (Alfa, Bravo, ...).",
         {"text": ("string", "Letters and digits to spell.")},
         '''
         WORDS = ("Alfa Bravo Charlie Delta Echo Foxtrot Golf Hotel India Juliett Kilo Lima Mike November Oscar "
                  "Papa Quebec Romeo Sierra Tango Uniform Victor Whiskey X-ray Yankee Zulu").split()
         DIGITS = "Zero One Two Three Four Five Six Seven Eight Nine".split()

         def run(text):
             out = []
             for c in text.upper():
                 if "A" <= c <= "Z":
                     out.append(WORDS[ord(c) - 65])
                 elif c.isdigit():
                     out.append(DIGITS[int(c)])
             return {"spelling": out}
         ''',
         {"text": "AB7"},
         ({"text": "hi 2"}, {"spelling": ["Hotel", "India", "Two"]})),
    tool(E, "run_length_encode", "Run-length encode a string (aaab → 3a1b), or decode such a string.",
         {"text": ("string", "The text."), "decode": ("boolean", "Decode instead.", False)},
         '''
         import re
         from itertools import groupby

         def run(text, decode=False):
             if decode:
                 return {"text": "".join(ch * int(n) for n, ch in re.findall(r"(\\d+)(\\D)", text))}
             return {"encoded": "".join(f"{len(list(g))}{ch}" for ch, g in groupby(text))}
         ''',
         {"text": "WWWWBBBW"},
         ({"text": "3a1b", "decode": True}, {"text": "aaab"})),
    tool(H, "password_strength", "Estimate a password's strength: character classes, length and entropy bits.",
         {"password": ("string", "The password to judge.")},
         '''
         import math
         import string

         def run(password):
             pools = [(string.ascii_lowercase, 26), (string.ascii_uppercase, 26), (string.digits, 10),
                      (string.punctuation, 32)]
             size = sum(n for chars, n in pools if any(c in chars for c in password))
             bits = round(len(password) * math.log2(size), 1) if size else 0.0
             rating = "weak" if bits < 40 else "fair" if bits < 60 else "strong"
             return {"length": len(password), "pool": size, "entropy_bits": bits, "rating": rating}
         ''',
         {"password": "Tr0ub4dor&3"},
         ({"password": "abc"}, {"length": 3, "pool": 26, "entropy_bits": 14.1, "rating": "weak"})),
    tool(H, "random_token_check", "Check whether a string looks like a random hex or base64url token, and its bits.",
         {"token": ("string", "The token.")},
         '''
         import re

         def run(token):
             if re.fullmatch(r"[0-9a-fA-F]+", token):
                 return {"kind": "hex", "bits": len(token) * 4}
             if re.fullmatch(r"[A-Za-z0-9_-]+", token):
                 return {"kind": "base64url", "bits": len(token) * 6}
             return {"kind": "other", "bits": None}
         ''',
         {"token": "9f86d081884c7d65"},
         ({"token": "abc-_XYZ"}, {"kind": "base64url", "bits": 48})),
)  # fmt: skip
