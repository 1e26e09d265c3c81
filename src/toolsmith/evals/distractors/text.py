"""Distractor tools on plain text: counting, case and spacing, ciphers, similarity."""

from __future__ import annotations

from toolsmith.evals.distractors.kit import Distractor, tool

F = "text"
TEXT = ("string", "The text to work on.")

TOOLS: tuple[Distractor, ...] = (
    tool(F, "text_statistics", "Count the words, characters, non-space characters and lines of a text.",
         {"text": TEXT},
         '''
         def run(text):
             return {"words": len(text.split()), "characters": len(text),
                     "non_space": sum(not c.isspace() for c in text), "lines": len(text.splitlines())}
         ''',
         {"text": "one two three"},
         ({"text": "a bc\nd"}, {"words": 3, "characters": 6, "non_space": 4, "lines": 2})),
    tool(F, "letter_frequency", "Count how often each letter occurs in a text (case-insensitive), most frequent first.",
         {"text": TEXT, "top": ("integer", "How many letters to return.", 5)},
         '''
         from collections import Counter

         def run(text, top=5):
             counts = Counter(c for c in text.lower() if c.isalpha())
             return {"letters": [[c, n] for c, n in counts.most_common(top)]}
         ''',
         {"text": "Mississippi river"},
         ({"text": "aab", "top": 1}, {"letters": [["a", 2]]})),
    tool(F, "word_frequency", "Count how often each word occurs in a text, ignoring case and punctuation.",
         {"text": TEXT, "top": ("integer", "How many words to return.", 10)},
         '''
         import re
         from collections import Counter

         def run(text, top=10):
             words = re.findall(r"[\\w']+", text.lower())
             return {"words": [[w, n] for w, n in Counter(words).most_common(top)], "distinct": len(set(words))}
         ''',
         {"text": "the cat and the hat"},
         ({"text": "Go, go! Stop.", "top": 1}, {"words": [["go", 2]], "distinct": 2})),
    tool(F, "reverse_words", "Reverse the order of the words in a text.",
         {"text": TEXT},
         '''
         def run(text):
             return {"text": " ".join(reversed(text.split()))}
         ''',
         {"text": "hello big world"},
         ({"text": "a b c"}, {"text": "c b a"})),
    tool(F, "is_palindrome", "Check whether a text reads the same backwards, ignoring case, spaces and punctuation.",
         {"text": TEXT},
         '''
         def run(text):
             letters = [c.lower() for c in text if c.isalnum()]
             return {"palindrome": letters == letters[::-1], "letters": len(letters)}
         ''',
         {"text": "Never odd or even"},
         ({"text": "abca"}, {"palindrome": False, "letters": 4})),
    tool(F, "are_anagrams", "Check whether two words or phrases are anagrams of each other (letters only).",
         {"first": ("string", "The first phrase."), "second": ("string", "The second phrase.")},
         '''
         def run(first, second):
             def key(s):
                 return sorted(c.lower() for c in s if c.isalpha())
             return {"anagrams": key(first) == key(second)}
         ''',
         {"first": "Listen", "second": "Silent"},
         ({"first": "abc", "second": "abd"}, {"anagrams": False})),
    tool(F, "caesar_cipher", "Shift every letter of a text by a number of places in the alphabet (Caesar cipher).",
         {"text": TEXT, "shift": ("integer", "Places to shift; negative to decode.")},
         '''
         def run(text, shift):
             out = []
             for c in text:
                 if c.isascii() and c.isalpha():
                     base = ord("a") if c.islower() else ord("A")
                     out.append(chr((ord(c) - base + shift) % 26 + base))
                 else:
                     out.append(c)
             return {"text": "".join(out)}
         ''',
         {"text": "Attack at dawn", "shift": 3},
         ({"text": "xyz", "shift": 2}, {"text": "zab"})),
    tool(F, "vigenere_cipher", "Encrypt or decrypt a text with the Vigenère cipher and a keyword.",
         {"text": TEXT, "key": ("string", "The keyword (letters)."),
          "decrypt": ("boolean", "Decrypt instead of encrypt.", False)},
         '''
         def run(text, key, decrypt=False):
             shifts = [ord(k) - ord("a") for k in key.lower() if k.isalpha()]
             if not shifts:
                 raise ValueError("the key needs at least one letter")
             out, i = [], 0
             for c in text:
                 if c.isascii() and c.isalpha():
                     base = ord("a") if c.islower() else ord("A")
                     step = -shifts[i % len(shifts)] if decrypt else shifts[i % len(shifts)]
                     out.append(chr((ord(c) - base + step) % 26 + base))
                     i += 1
                 else:
                     out.append(c)
             return {"text": "".join(out)}
         ''',
         {"text": "attack at dawn", "key": "lemon"},
         ({"text": "LXFOPV", "key": "lemon", "decrypt": True}, {"text": "ATTACK"})),
    tool(F, "morse_code", "Translate text to Morse code, or Morse code (letters split by spaces, words by /) to text.",
         {"text": TEXT, "decode": ("boolean", "Decode Morse code to text.", False)},
         '''
         LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
         CODES = (".- -... -.-. -.. . ..-. --. .... .. .--- -.- .-.. -- -. --- .--. --.- .-. ... - ..- ...- .-- "
                  "-..- -.-- --.. ----- .---- ..--- ...-- ....- ..... -.... --... ---.. ----.").split()
         TO_MORSE = dict(zip(LETTERS, CODES))
         FROM_MORSE = {v: k for k, v in TO_MORSE.items()}

         def run(text, decode=False):
             if decode:
                 words = [w.split() for w in text.strip().split("/")]
                 return {"text": " ".join("".join(FROM_MORSE.get(c, "?") for c in w) for w in words)}
             words = text.upper().split()
             return {"morse": " / ".join(" ".join(TO_MORSE[c] for c in w if c in TO_MORSE) for w in words)}
         ''',
         {"text": "SOS help"},
         ({"text": "SOS"}, {"morse": "... --- ..."}),
         ({"text": "... --- ... / .... ..", "decode": True}, {"text": "SOS HI"})),
    tool(F, "levenshtein_distance", "Edit distance between two strings: the fewest insertions, deletions and substitutions.",
         {"first": ("string", "The first string."), "second": ("string", "The second string.")},
         '''
         def run(first, second):
             previous = list(range(len(second) + 1))
             for i, a in enumerate(first, 1):
                 current = [i]
                 for j, b in enumerate(second, 1):
                     current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a != b)))
                 previous = current
             return {"distance": previous[-1]}
         ''',
         {"first": "kitten", "second": "sitting"},
         ({"first": "flaw", "second": "lawn"}, {"distance": 2})),
    tool(F, "hamming_distance", "Number of positions at which two equal-length strings differ.",
         {"first": ("string", "The first string."), "second": ("string", "The second string, same length.")},
         '''
         def run(first, second):
             if len(first) != len(second):
                 raise ValueError("the strings must have the same length")
             return {"distance": sum(a != b for a, b in zip(first, second))}
         ''',
         {"first": "karolin", "second": "kathrin"},
         ({"first": "1011101", "second": "1001001"}, {"distance": 2})),
    tool(F, "longest_common_subsequence", "The longest common subsequence of two strings and its length.",
         {"first": ("string", "The first string."), "second": ("string", "The second string.")},
         '''
         def run(first, second):
             table = [[""] * (len(second) + 1) for _ in range(len(first) + 1)]
             for i, a in enumerate(first):
                 for j, b in enumerate(second):
                     if a == b:
                         table[i + 1][j + 1] = table[i][j] + a
                     else:
                         table[i + 1][j + 1] = max(table[i][j + 1], table[i + 1][j], key=len)
             best = table[-1][-1]
             return {"subsequence": best, "length": len(best)}
         ''',
         {"first": "AGGTAB", "second": "GXTXAYB"},
         ({"first": "abc", "second": "ac"}, {"subsequence": "ac", "length": 2})),
    tool(F, "common_prefix", "The longest prefix shared by all strings in a list.",
         {"strings": ("strings", "The strings to compare.")},
         '''
         import os

         def run(strings):
             return {"prefix": os.path.commonprefix(list(strings))}
         ''',
         {"strings": ["interspecies", "interstellar", "interstate"]},
         ({"strings": ["dog", "racecar"]}, {"prefix": ""})),
    tool(F, "soundex_code", "The American Soundex code of a surname (letter plus three digits).",
         {"name": ("string", "The name to encode.")},
         '''
         def run(name):
             groups = {"bfpv": "1", "cgjkqsxz": "2", "dt": "3", "l": "4", "mn": "5", "r": "6"}
             digit = {c: d for letters, d in groups.items() for c in letters}
             letters = [c for c in name.lower() if c.isalpha()]
             if not letters:
                 raise ValueError("the name has no letters")
             code, last = letters[0].upper(), digit.get(letters[0], "")
             for c in letters[1:]:
                 d = digit.get(c, "")
                 if d and d != last:
                     code += d
                 if c not in "hw":
                     last = d
             return {"soundex": (code + "000")[:4]}
         ''',
         {"name": "Robert"},
         ({"name": "Tymczak"}, {"soundex": "T522"}), ({"name": "Ashcraft"}, {"soundex": "A261"})),
    tool(F, "pig_latin", "Translate English words to Pig Latin.",
         {"text": TEXT},
         '''
         def run(text):
             def word(w):
                 for i, c in enumerate(w):
                     if c.lower() in "aeiou":
                         return w[i:] + w[:i] + ("way" if i == 0 else "ay")
                 return w + "ay"
             return {"text": " ".join(word(w) for w in text.split())}
         ''',
         {"text": "hello world"},
         ({"text": "apple string"}, {"text": "appleway ingstray"})),
    tool(F, "snake_to_camel", "Convert snake_case or kebab-case identifiers to camelCase or PascalCase.",
         {"name": ("string", "The identifier."), "pascal": ("boolean", "Capitalise the first word too.", False)},
         '''
         import re

         def run(name, pascal=False):
             parts = [p for p in re.split(r"[_\\-\\s]+", name) if p]
             words = [p.lower().capitalize() for p in parts]
             if words and not pascal:
                 words[0] = words[0].lower()
             return {"name": "".join(words)}
         ''',
         {"name": "user_account_id"},
         ({"name": "http-status-code", "pascal": True}, {"name": "HttpStatusCode"})),
    tool(F, "camel_to_snake", "Convert camelCase or PascalCase identifiers to snake_case.",
         {"name": ("string", "The identifier.")},
         '''
         import re

         def run(name):
             spaced = re.sub(r"([a-z0-9])([A-Z])", r"\\1_\\2", re.sub(r"([A-Z]+)([A-Z][a-z])", r"\\1_\\2", name))
             return {"name": spaced.lower()}
         ''',
         {"name": "parseHTTPResponseCode"},
         ({"name": "UserId"}, {"name": "user_id"})),
    tool(F, "slugify", "Make a URL slug from a title: lowercase ASCII words joined by hyphens.",
         {"text": TEXT},
         '''
         import re
         import unicodedata

         def run(text):
             ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
             return {"slug": re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")}
         ''',
         {"text": "Crème Brûlée: a How-To Guide!"},
         ({"text": "  Hello,   World  "}, {"slug": "hello-world"})),
    tool(F, "title_case", "Capitalise a headline in title case, keeping short joining words lowercase.",
         {"text": TEXT},
         '''
         SMALL = {"a", "an", "and", "as", "at", "but", "by", "for", "in", "of", "on", "or", "the", "to", "with"}

         def run(text):
             words = text.lower().split()
             out = [w if 0 < i < len(words) - 1 and w in SMALL else w[:1].upper() + w[1:] for i, w in enumerate(words)]
             return {"text": " ".join(out)}
         ''',
         {"text": "the lord of the rings"},
         ({"text": "a tale of two cities"}, {"text": "A Tale of Two Cities"})),
    tool(F, "wrap_text", "Wrap a paragraph to lines of at most a given width.",
         {"text": TEXT, "width": ("integer", "The maximum line width.", 40)},
         '''
         import textwrap

         def run(text, width=40):
             lines = textwrap.wrap(text, width=width)
             return {"lines": lines, "count": len(lines)}
         ''',
         {"text": "The quick brown fox jumps over the lazy dog again and again.", "width": 20},
         ({"text": "aa bb cc", "width": 5}, {"lines": ["aa bb", "cc"], "count": 2})),
    tool(F, "extract_emails", "Find the e-mail addresses in a text, in order, without repeats.",
         {"text": TEXT},
         '''
         import re

         def run(text):
             found = re.findall(r"[\\w.+-]+@[\\w-]+(?:\\.[\\w-]+)+", text)
             return {"emails": list(dict.fromkeys(found))}
         ''',
         {"text": "Write to ana@site.org or bo.li+x@mail.co.uk, or ana@site.org."},
         ({"text": "no address here"}, {"emails": []})),
    tool(F, "extract_hashtags", "Find the #hashtags and @mentions in a social media post.",
         {"text": TEXT},
         '''
         import re

         def run(text):
             return {"hashtags": re.findall(r"#(\\w+)", text), "mentions": re.findall(r"@(\\w+)", text)}
         ''',
         {"text": "Loving #python with @guido and #opensource"},
         ({"text": "#a @b #c"}, {"hashtags": ["a", "c"], "mentions": ["b"]})),
    tool(F, "strip_html", "Remove HTML tags from markup and return the visible text.",
         {"html": ("string", "The HTML markup.")},
         '''
         from html.parser import HTMLParser

         class _Text(HTMLParser):
             def __init__(self):
                 super().__init__()
                 self.parts, self.skip = [], 0

             def handle_starttag(self, tag, attrs):
                 self.skip += tag in ("script", "style")

             def handle_endtag(self, tag):
                 self.skip -= tag in ("script", "style")

             def handle_data(self, data):
                 if not self.skip:
                     self.parts.append(data)

         def run(html):
             parser = _Text()
             parser.feed(html)
             return {"text": " ".join(" ".join(parser.parts).split())}
         ''',
         {"html": "<p>Hello <b>there</b></p><script>x()</script>"},
         ({"html": "<div>a<br>b</div>"}, {"text": "a b"})),
    tool(F, "normalize_whitespace", "Collapse runs of spaces, tabs and newlines in a text to single spaces.",
         {"text": TEXT},
         '''
         def run(text):
             return {"text": " ".join(text.split())}
         ''',
         {"text": "  lots   of \t space\n here "},
         ({"text": "a\n\nb"}, {"text": "a b"})),
    tool(F, "remove_accents", "Strip accents and diacritics from letters (é to e, ü to u).",
         {"text": TEXT},
         '''
         import unicodedata

         def run(text):
             decomposed = unicodedata.normalize("NFKD", text)
             return {"text": "".join(c for c in decomposed if not unicodedata.combining(c))}
         ''',
         {"text": "Crème brûlée à Zürich"},
         ({"text": "ñandú"}, {"text": "nandu"})),
    tool(F, "unicode_names", "The Unicode name and code point of every character in a string.",
         {"text": TEXT},
         '''
         import unicodedata

         def run(text):
             return {"characters": [{"char": c, "code_point": f"U+{ord(c):04X}", "name": unicodedata.name(c, "?")}
                                    for c in text]}
         ''',
         {"text": "é€"},
         ({"text": "A"}, {"characters": [{"char": "A", "code_point": "U+0041", "name": "LATIN CAPITAL LETTER A"}]})),
    tool(F, "string_similarity", "Similarity ratio (0 to 1) of two strings, as difflib's SequenceMatcher measures it.",
         {"first": ("string", "The first string."), "second": ("string", "The second string.")},
         '''
         from difflib import SequenceMatcher

         def run(first, second):
             return {"ratio": round(SequenceMatcher(None, first, second).ratio(), 4)}
         ''',
         {"first": "apple pie", "second": "apple tie"},
         ({"first": "abcd", "second": "abcd"}, {"ratio": 1.0})),
    tool(F, "closest_words", "The words from a list that best match a possibly misspelled word.",
         {"word": ("string", "The word to match."), "candidates": ("strings", "The known words."),
          "limit": ("integer", "How many matches at most.", 3)},
         '''
         from difflib import get_close_matches

         def run(word, candidates, limit=3):
             return {"matches": get_close_matches(word, candidates, n=limit)}
         ''',
         {"word": "appel", "candidates": ["ape", "apple", "peach", "puppy"]},
         ({"word": "zzz", "candidates": ["apple"]}, {"matches": []})),
    tool(F, "text_diff", "A unified diff between two versions of a text, line by line.",
         {"before": ("string", "The old text."), "after": ("string", "The new text.")},
         '''
         import difflib

         def run(before, after):
             lines = list(difflib.unified_diff(before.splitlines(), after.splitlines(), "before", "after", lineterm=""))
             added = sum(1 for x in lines if x.startswith("+") and not x.startswith("+++"))
             removed = sum(1 for x in lines if x.startswith("-") and not x.startswith("---"))
             return {"diff": "\\n".join(lines), "added": added, "removed": removed}
         ''',
         {"before": "a\nb\nc", "after": "a\nB\nc"},
         ({"before": "x", "after": "x"}, {"diff": "", "added": 0, "removed": 0})),
    tool(F, "acronym", "Make an acronym from the initial letters of a phrase.",
         {"text": TEXT},
         '''
         import re

         def run(text):
             return {"acronym": "".join(w[0].upper() for w in re.findall(r"[A-Za-z]+", text))}
         ''',
         {"text": "portable network graphics"},
         ({"text": "as soon as possible"}, {"acronym": "ASAP"})),
    tool(F, "count_vowels", "Count vowels and consonants in an English text.",
         {"text": TEXT},
         '''
         def run(text):
             letters = [c for c in text.lower() if c.isascii() and c.isalpha()]
             vowels = sum(c in "aeiou" for c in letters)
             return {"vowels": vowels, "consonants": len(letters) - vowels}
         ''',
         {"text": "Programming is fun"},
         ({"text": "aei xyz"}, {"vowels": 3, "consonants": 3})),
    tool(F, "is_pangram", "Check whether a sentence uses every letter of the English alphabet; list the missing ones.",
         {"text": TEXT},
         '''
         import string

         def run(text):
             missing = sorted(set(string.ascii_lowercase) - set(text.lower()))
             return {"pangram": not missing, "missing": missing}
         ''',
         {"text": "The quick brown fox jumps over the lazy dog"},
         ({"text": "abcdefghijklmnopqrstuvwxy"}, {"pangram": False, "missing": ["z"]})),
    tool(F, "truncate_text", "Shorten a text to a maximum length at a word boundary, adding an ellipsis.",
         {"text": TEXT, "limit": ("integer", "The maximum length, ellipsis included.")},
         '''
         def run(text, limit):
             if len(text) <= limit:
                 return {"text": text, "truncated": False}
             cut = text[: max(limit - 1, 0)]
             if " " in cut:
                 cut = cut[: cut.rfind(" ")]
             return {"text": cut.rstrip() + "…", "truncated": True}
         ''',
         {"text": "The quick brown fox jumps over the lazy dog", "limit": 20},
         ({"text": "short", "limit": 10}, {"text": "short", "truncated": False})),
    tool(F, "sentence_split", "Split a text into sentences at ., ! and ? followed by a space.",
         {"text": TEXT},
         '''
         import re

         def run(text):
             parts = [p.strip() for p in re.split(r"(?<=[.!?])\\s+", text.strip()) if p.strip()]
             return {"sentences": parts, "count": len(parts)}
         ''',
         {"text": "Hi there. How are you? Fine!"},
         ({"text": "One. Two."}, {"sentences": ["One.", "Two."], "count": 2})),
    tool(F, "longest_word", "The longest word(s) in a text and their length.",
         {"text": TEXT},
         '''
         import re

         def run(text):
             words = re.findall(r"[\\w'-]+", text)
             if not words:
                 return {"words": [], "length": 0}
             size = max(len(w) for w in words)
             return {"words": list(dict.fromkeys(w for w in words if len(w) == size)), "length": size}
         ''',
         {"text": "a quick extraordinary fox"},
         ({"text": "ab cd e"}, {"words": ["ab", "cd"], "length": 2})),
    tool(F, "leetspeak", "Rewrite text in leetspeak (a to 4, e to 3, i to 1, o to 0, s to 5, t to 7).",
         {"text": TEXT},
         '''
         def run(text):
             return {"text": text.translate(str.maketrans("aeiostAEIOST", "431057431057"))}
         ''',
         {"text": "elite hackers"},
         ({"text": "toast"}, {"text": "70457"})),
    tool(F, "rot13", "Apply ROT13 to a text (applying it twice gives the text back).",
         {"text": TEXT},
         '''
         import codecs

         def run(text):
             return {"text": codecs.encode(text, "rot_13")}
         ''',
         {"text": "Why did the chicken cross the road?"},
         ({"text": "Uryyb"}, {"text": "Hello"})),
)  # fmt: skip
