"""Distractor tools on data formats: JSON, CSV, INI, XML, URLs, network addresses, colours."""

from __future__ import annotations

from toolsmith.evals.distractors.kit import Distractor, tool

D = "data-formats"
W = "web-and-network"
C = "colours"
JSON_TEXT = ("string", "JSON text.")

TOOLS: tuple[Distractor, ...] = (
    tool(D, "json_validate", "Check whether a text is valid JSON; say where it breaks if not.",
         {"text": JSON_TEXT},
         '''
         import json

         def run(text):
             try:
                 value = json.loads(text)
             except json.JSONDecodeError as exc:
                 return {"valid": False, "error": exc.msg, "line": exc.lineno, "column": exc.colno}
             return {"valid": True, "type": type(value).__name__}
         ''',
         {"text": '{"a": [1, 2, {"b": null}]}'},
         ({"text": '{"a": 1,}'}, {"valid": False, "error": "Expecting property name enclosed in double quotes",
                                  "line": 1, "column": 9})),
    tool(D, "json_pretty", "Pretty-print JSON with sorted keys and a chosen indent, or minify it.",
         {"text": JSON_TEXT, "indent": ("integer", "Spaces per level; 0 to minify.", 2)},
         '''
         import json

         def run(text, indent=2):
             value = json.loads(text)
             if indent == 0:
                 return {"text": json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)}
             return {"text": json.dumps(value, sort_keys=True, indent=indent, ensure_ascii=False)}
         ''',
         {"text": '{"b": 1, "a": [1, 2]}'},
         ({"text": '{ "b" : 2 , "a" : 1 }', "indent": 0}, {"text": '{"a":1,"b":2}'})),
    tool(D, "json_pointer_get", "Read a value from JSON by a JSON Pointer path such as /users/0/name.",
         {"text": JSON_TEXT, "pointer": ("string", "The JSON Pointer (RFC 6901).")},
         '''
         import json

         def run(text, pointer):
             value = json.loads(text)
             if pointer in ("", "/"):
                 return {"value": value}
             for raw in pointer.lstrip("/").split("/"):
                 part = raw.replace("~1", "/").replace("~0", "~")
                 value = value[int(part)] if isinstance(value, list) else value[part]
             return {"value": value}
         ''',
         {"text": '{"users": [{"name": "Ann"}, {"name": "Bo"}]}', "pointer": "/users/1/name"},
         ({"text": '{"a/b": {"c": 3}}', "pointer": "/a~1b/c"}, {"value": 3})),
    tool(D, "flatten_json", "Flatten nested JSON objects to dotted keys (a.b.0.c).",
         {"text": JSON_TEXT, "separator": ("string", "Key separator.", ".")},
         '''
         import json

         def run(text, separator="."):
             out = {}

             def walk(value, prefix):
                 if isinstance(value, dict) and value:
                     for k, v in value.items():
                         walk(v, f"{prefix}{separator}{k}" if prefix else str(k))
                 elif isinstance(value, list) and value:
                     for i, v in enumerate(value):
                         walk(v, f"{prefix}{separator}{i}" if prefix else str(i))
                 else:
                     out[prefix] = value

             walk(json.loads(text), "")
             return {"flat": out}
         ''',
         {"text": '{"a": {"b": [1, {"c": true}]}, "d": "x"}'},
         ({"text": '{"a": {"b": 1}}', "separator": "/"}, {"flat": {"a/b": 1}})),
    tool(D, "json_diff", "Keys added, removed and changed between two JSON objects (top level and nested).",
         {"before": ("string", "The old JSON object."), "after": ("string", "The new JSON object.")},
         '''
         import json

         def run(before, after):
             changes = {"added": [], "removed": [], "changed": []}

             def walk(a, b, path):
                 for k in sorted(set(a) | set(b)):
                     p = f"{path}.{k}" if path else k
                     if k not in a:
                         changes["added"].append(p)
                     elif k not in b:
                         changes["removed"].append(p)
                     elif isinstance(a[k], dict) and isinstance(b[k], dict):
                         walk(a[k], b[k], p)
                     elif a[k] != b[k]:
                         changes["changed"].append(p)

             walk(json.loads(before), json.loads(after), "")
             return changes
         ''',
         {"before": '{"a": 1, "b": {"c": 2}}', "after": '{"a": 1, "b": {"c": 3}, "d": 4}'},
         ({"before": '{"x": 1}', "after": '{}'}, {"added": [], "removed": ["x"], "changed": []})),
    tool(D, "csv_to_json", "Parse CSV text (with a header row) into a list of records.",
         {"text": ("string", "CSV text with a header row."), "delimiter": ("string", "Field delimiter.", ",")},
         '''
         import csv
         import io

         def run(text, delimiter=","):
             rows = list(csv.DictReader(io.StringIO(text), delimiter=delimiter))
             return {"records": rows, "columns": list(rows[0].keys()) if rows else []}
         ''',
         {"text": "name,age\nAnn,31\nBo,25\n"},
         ({"text": "a;b\n1;2\n", "delimiter": ";"}, {"records": [{"a": "1", "b": "2"}], "columns": ["a", "b"]})),
    tool(D, "json_to_csv", "Write a list of JSON records as CSV text with a header row.",
         {"records": ("list", "The records (objects).")},
         '''
         import csv
         import io

         def run(records):
             columns = list(dict.fromkeys(k for r in records for k in r))
             out = io.StringIO()
             writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\\n")
             writer.writeheader()
             writer.writerows(records)
             return {"csv": out.getvalue()}
         ''',
         {"records": [{"name": "Ann", "age": 31}, {"name": "Bo", "city": "Oslo"}]},
         ({"records": [{"a": 1}]}, {"csv": "a\n1\n"})),
    tool(D, "csv_column_stats", "Per-column summary of CSV data: numeric columns get min, max and mean.",
         {"text": ("string", "CSV text with a header row.")},
         '''
         import csv
         import io

         def run(text):
             rows = list(csv.DictReader(io.StringIO(text)))
             stats = {}
             for col in (rows[0].keys() if rows else []):
                 cells = [r[col] for r in rows if r[col] not in ("", None)]
                 try:
                     nums = [float(c) for c in cells]
                 except ValueError:
                     stats[col] = {"type": "text", "distinct": len(set(cells))}
                     continue
                 stats[col] = {"type": "number", "min": min(nums), "max": max(nums), "mean": sum(nums) / len(nums)}
             return {"rows": len(rows), "columns": stats}
         ''',
         {"text": "city,pop\nOslo,700\nBergen,290\n"},
         ({"text": "a,b\n1,x\n3,y\n"}, {"rows": 2, "columns": {"a": {"type": "number", "min": 1.0, "max": 3.0, "mean": 2.0},
                                                              "b": {"type": "text", "distinct": 2}}})),
    tool(D, "ini_parse", "Parse INI configuration text into sections and keys.",
         {"text": ("string", "INI text.")},
         '''
         import configparser

         def run(text):
             parser = configparser.ConfigParser(interpolation=None)
             parser.read_string(text)
             return {"sections": {s: dict(parser[s]) for s in parser.sections()}}
         ''',
         {"text": "[server]\nhost = example.org\nport = 8080\n"},
         ({"text": "[a]\nx=1\n[b]\ny = two\n"}, {"sections": {"a": {"x": "1"}, "b": {"y": "two"}}})),
    tool(D, "xml_to_dict", "Turn simple XML into nested objects (attributes under @, text under #text).",
         {"text": ("string", "XML text.")},
         '''
         import xml.etree.ElementTree as ET

         def convert(node):
             out = {f"@{k}": v for k, v in node.attrib.items()}
             for child in node:
                 value = convert(child)
                 if child.tag in out:
                     out[child.tag] = out[child.tag] if isinstance(out[child.tag], list) else [out[child.tag]]
                     out[child.tag].append(value)
                 else:
                     out[child.tag] = value
             text = (node.text or "").strip()
             if text and not out:
                 return text
             if text:
                 out["#text"] = text
             return out

         def run(text):
             root = ET.fromstring(text)
             return {root.tag: convert(root)}
         ''',
         {"text": '<book id="7"><title>Dune</title><tag>sf</tag><tag>classic</tag></book>'},
         ({"text": "<a><b>1</b></a>"}, {"a": {"b": "1"}})),
    tool(D, "semver_compare", "Compare two semantic versions (1.2.3-beta.1) and say which is newer.",
         {"first": ("string", "First version."), "second": ("string", "Second version.")},
         '''
         import re

         def parse(v):
             m = re.fullmatch(r"v?(\\d+)\\.(\\d+)\\.(\\d+)(?:-([0-9A-Za-z.-]+))?(?:\\+\\S+)?", v.strip())
             if not m:
                 raise ValueError(f"{v!r} is not a semantic version")
             pre = [(0, int(p), "") if p.isdigit() else (1, 0, p) for p in m.group(4).split(".")] if m.group(4) else None
             return tuple(int(x) for x in m.group(1, 2, 3)), pre

         def run(first, second):
             (a, pa), (b, pb) = parse(first), parse(second)
             if a != b:
                 order = (a > b) - (a < b)
             elif pa == pb:
                 order = 0
             elif pa is None or pb is None:
                 order = 1 if pa is None else -1
             else:
                 order = (pa > pb) - (pa < pb)
             return {"order": order, "newer": first if order > 0 else second if order < 0 else None}
         ''',
         {"first": "1.10.0", "second": "1.9.7"},
         ({"first": "2.0.0-rc.1", "second": "2.0.0"}, {"order": -1, "newer": "2.0.0"})),
    tool(D, "semver_bump", "Bump a semantic version's major, minor or patch part.",
         {"version": ("string", "The current version."), "part": ("string", "major, minor or patch.", "patch")},
         '''
         def run(version, part="patch"):
             major, minor, patch = (int(x) for x in version.lstrip("v").split("-")[0].split("+")[0].split("."))
             if part == "major":
                 major, minor, patch = major + 1, 0, 0
             elif part == "minor":
                 minor, patch = minor + 1, 0
             elif part == "patch":
                 patch += 1
             else:
                 raise ValueError("part must be major, minor or patch")
             return {"version": f"{major}.{minor}.{patch}"}
         ''',
         {"version": "3.7.12", "part": "minor"},
         ({"version": "1.2.3"}, {"version": "1.2.4"})),
    tool(D, "email_syntax_check", "Check the syntax of an e-mail address and split it into local part and domain.",
         {"address": ("string", "The e-mail address.")},
         '''
         import re

         def run(address):
             m = re.fullmatch(r"([A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+)@((?:[A-Za-z0-9-]+\\.)+[A-Za-z]{2,})", address.strip())
             if not m or ".." in m.group(1) or m.group(1).startswith(".") or m.group(1).endswith("."):
                 return {"valid": False}
             return {"valid": True, "local": m.group(1), "domain": m.group(2).lower()}
         ''',
         {"address": "Jane.Doe+news@Mail.Example.com"},
         ({"address": "no..dots@site.org"}, {"valid": False})),
    tool(D, "uuid_inspect", "Check a UUID and report its version and variant.",
         {"value": ("string", "The UUID text.")},
         '''
         import uuid

         def run(value):
             try:
                 u = uuid.UUID(value)
             except ValueError:
                 return {"valid": False}
             return {"valid": True, "version": u.version, "variant": u.variant, "canonical": str(u)}
         ''',
         {"value": "{12345678-1234-5678-1234-567812345678}"},
         ({"value": "6fa459ea-ee8a-3ca4-894e-db77e160355e"}, {"valid": True, "version": 3,
                                                             "variant": "specified in RFC 4122",
                                                             "canonical": "6fa459ea-ee8a-3ca4-894e-db77e160355e"})),
    tool(D, "regex_find_all", "Find every match of a regular expression in a text, with groups and positions.",
         {"pattern": ("string", "The regular expression."), "text": ("string", "The text to search."),
          "ignore_case": ("boolean", "Case-insensitive.", False)},
         '''
         import re

         def run(pattern, text, ignore_case=False):
             flags = re.IGNORECASE if ignore_case else 0
             found = [{"match": m.group(0), "start": m.start(), "groups": list(m.groups())}
                      for m in re.finditer(pattern, text, flags)]
             return {"count": len(found), "matches": found}
         ''',
         {"pattern": r"(\w+)@(\w+)", "text": "ann@home bo@work"},
         ({"pattern": "a", "text": "bAnAnA", "ignore_case": True},
          {"count": 3, "matches": [{"match": "A", "start": 1, "groups": []}, {"match": "A", "start": 3, "groups": []},
                                   {"match": "A", "start": 5, "groups": []}]})),
    tool(D, "regex_replace", "Replace every match of a regular expression (with backreferences like \\\\1).",
         {"pattern": ("string", "The regular expression."), "replacement": ("string", "The replacement."),
          "text": ("string", "The text.")},
         '''
         import re

         def run(pattern, replacement, text):
             result, count = re.subn(pattern, replacement, text)
             return {"text": result, "replacements": count}
         ''',
         {"pattern": r"(\d{4})-(\d{2})", "replacement": r"\2/\1", "text": "from 2020-05 to 2021-07"},
         ({"pattern": "o", "replacement": "0", "text": "foo"}, {"text": "f00", "replacements": 2})),
    tool(W, "parse_url", "Split a URL into scheme, host, port, path, query parameters and fragment.",
         {"url": ("string", "The URL.")},
         '''
         from urllib.parse import parse_qs, urlsplit

         def run(url):
             p = urlsplit(url)
             return {"scheme": p.scheme, "host": p.hostname, "port": p.port, "path": p.path,
                     "query": {k: v if len(v) > 1 else v[0] for k, v in parse_qs(p.query).items()}, "fragment": p.fragment}
         ''',
         {"url": "https://user@shop.example.com:8443/cart/view?id=7&tag=a&tag=b#top"},
         ({"url": "http://a.org/x?q=1"}, {"scheme": "http", "host": "a.org", "port": None, "path": "/x",
                                         "query": {"q": "1"}, "fragment": ""})),
    tool(W, "build_query_string", "Build a URL query string from parameters (lists become repeated keys).",
         {"params": ("object", "Parameter names and values.")},
         '''
         from urllib.parse import urlencode

         def run(params):
             return {"query": urlencode(params, doseq=True)}
         ''',
         {"params": {"q": "café au lait", "page": 2, "tag": ["a", "b"]}},
         ({"params": {"a": 1, "b": "x y"}}, {"query": "a=1&b=x+y"})),
    tool(W, "resolve_relative_url", "Resolve a relative link against a base URL, as a browser does.",
         {"base": ("string", "The page's URL."), "link": ("string", "The relative link.")},
         '''
         from urllib.parse import urljoin

         def run(base, link):
             return {"url": urljoin(base, link)}
         ''',
         {"base": "https://site.org/docs/guide/intro.html", "link": "../api/index.html#top"},
         ({"base": "http://a.org/x/y", "link": "/z"}, {"url": "http://a.org/z"})),
    tool(W, "ip_address_info", "Classify an IPv4 or IPv6 address: version, private, loopback, multicast, reverse name.",
         {"address": ("string", "The IP address.")},
         '''
         import ipaddress

         def run(address):
             ip = ipaddress.ip_address(address.strip())
             return {"version": ip.version, "private": ip.is_private, "loopback": ip.is_loopback,
                     "multicast": ip.is_multicast, "global": ip.is_global, "reverse": ip.reverse_pointer}
         ''',
         {"address": "192.168.10.20"},
         ({"address": "127.0.0.1"}, {"version": 4, "private": True, "loopback": True, "multicast": False,
                                     "global": False, "reverse": "1.0.0.127.in-addr.arpa"})),
    tool(W, "cidr_details", "Details of a CIDR network: netmask, first and last host, number of addresses.",
         {"network": ("string", "The network, e.g. 10.0.0.0/22.")},
         '''
         import ipaddress

         def run(network):
             net = ipaddress.ip_network(network.strip(), strict=False)
             hosts = list(net.hosts()) if net.num_addresses <= 65536 else None
             return {"network": str(net), "netmask": str(net.netmask), "addresses": net.num_addresses,
                     "first_host": str(hosts[0]) if hosts else None, "last_host": str(hosts[-1]) if hosts else None,
                     "broadcast": str(net.broadcast_address)}
         ''',
         {"network": "10.20.0.0/22"},
         ({"network": "192.168.1.7/30"}, {"network": "192.168.1.4/30", "netmask": "255.255.255.252", "addresses": 4,
                                          "first_host": "192.168.1.5", "last_host": "192.168.1.6",
                                          "broadcast": "192.168.1.7"})),
    tool(W, "ip_in_network", "Check whether an IP address belongs to any of several CIDR networks.",
         {"address": ("string", "The IP address."), "networks": ("strings", "CIDR networks.")},
         '''
         import ipaddress

         def run(address, networks):
             ip = ipaddress.ip_address(address)
             matches = [n for n in networks if ip in ipaddress.ip_network(n, strict=False)]
             return {"inside": bool(matches), "matches": matches}
         ''',
         {"address": "172.16.5.4", "networks": ["10.0.0.0/8", "172.16.0.0/12"]},
         ({"address": "8.8.8.8", "networks": ["10.0.0.0/8"]}, {"inside": False, "matches": []})),
    tool(W, "subnet_split", "Split a network into subnets of a longer prefix.",
         {"network": ("string", "The network."), "prefix": ("integer", "The new prefix length.")},
         '''
         import ipaddress

         def run(network, prefix):
             subnets = list(ipaddress.ip_network(network, strict=False).subnets(new_prefix=prefix))
             if len(subnets) > 1024:
                 raise ValueError("too many subnets")
             return {"subnets": [str(s) for s in subnets]}
         ''',
         {"network": "10.0.0.0/16", "prefix": 18},
         ({"network": "192.168.0.0/24", "prefix": 25}, {"subnets": ["192.168.0.0/25", "192.168.0.128/25"]})),
    tool(W, "mac_address_format", "Normalise a MAC address and write it with colons, hyphens or Cisco dots.",
         {"address": ("string", "The MAC address in any common form."),
          "style": ("string", "colon, hyphen or cisco.", "colon")},
         '''
         import re

         def run(address, style="colon"):
             digits = re.sub(r"[^0-9a-fA-F]", "", address).lower()
             if len(digits) != 12:
                 raise ValueError("a MAC address has 12 hex digits")
             pairs = [digits[i:i + 2] for i in range(0, 12, 2)]
             text = {"colon": ":".join(pairs), "hyphen": "-".join(pairs).upper(),
                     "cisco": ".".join(digits[i:i + 4] for i in range(0, 12, 4))}[style]
             return {"mac": text, "multicast": int(digits[1], 16) & 1 == 1}
         ''',
         {"address": "00-1A-2B-3C-4D-5E", "style": "cisco"},
         ({"address": "aabb.ccdd.eeff"}, {"mac": "aa:bb:cc:dd:ee:ff", "multicast": False})),
    tool(W, "http_status_meaning", "The name and class of an HTTP status code.",
         {"code": ("integer", "The HTTP status code.")},
         '''
         from http import HTTPStatus

         def run(code):
             classes = {1: "informational", 2: "success", 3: "redirection", 4: "client error", 5: "server error"}
             try:
                 phrase = HTTPStatus(code).phrase
             except ValueError:
                 phrase = None
             return {"code": code, "phrase": phrase, "class": classes.get(code // 100, "unknown")}
         ''',
         {"code": 418},
         ({"code": 404}, {"code": 404, "phrase": "Not Found", "class": "client error"})),
    tool(W, "mime_type_guess", "Guess the MIME type and encoding of a file from its name.",
         {"filename": ("string", "The file name or path.")},
         '''
         import mimetypes

         def run(filename):
             kind, encoding = mimetypes.guess_type(filename, strict=False)
             return {"type": kind, "encoding": encoding}
         ''',
         {"filename": "report.final.pdf"},
         ({"filename": "data.csv.gz"}, {"type": "text/csv", "encoding": "gzip"})),
    tool(C, "hex_to_rgb", "Convert a hex colour (#rgb or #rrggbb) to RGB, and RGB to hex.",
         {"color": ("string", "A hex colour, or r,g,b.")},
         '''
         def run(color):
             text = color.strip()
             if "," in text:
                 r, g, b = (int(x) for x in text.split(","))
                 return {"hex": f"#{r:02x}{g:02x}{b:02x}"}
             digits = text.lstrip("#")
             if len(digits) == 3:
                 digits = "".join(c * 2 for c in digits)
             return {"rgb": [int(digits[i:i + 2], 16) for i in (0, 2, 4)]}
         ''',
         {"color": "#1e90ff"},
         ({"color": "#fa0"}, {"rgb": [255, 170, 0]}), ({"color": "255, 0, 128"}, {"hex": "#ff0080"})),
    tool(C, "rgb_to_hsl_hsv", "Convert an RGB colour (0-255) to HSL and HSV (hue in degrees, others in %).",
         {"rgb": ("integers", "Red, green, blue, each 0-255.")},
         '''
         import colorsys

         def run(rgb):
             r, g, b = (x / 255 for x in rgb)
             h, l, s = colorsys.rgb_to_hls(r, g, b)
             hv, sv, v = colorsys.rgb_to_hsv(r, g, b)
             return {"hsl": [round(h * 360, 1), round(s * 100, 1), round(l * 100, 1)],
                     "hsv": [round(hv * 360, 1), round(sv * 100, 1), round(v * 100, 1)]}
         ''',
         {"rgb": [30, 144, 255]},
         ({"rgb": [255, 0, 0]}, {"hsl": [0.0, 100.0, 50.0], "hsv": [0.0, 100.0, 100.0]})),
    tool(C, "contrast_ratio", "WCAG contrast ratio of two hex colours, and whether it passes AA and AAA.",
         {"foreground": ("string", "Text colour, hex."), "background": ("string", "Background colour, hex.")},
         '''
         def luminance(color):
             digits = color.lstrip("#")
             if len(digits) == 3:
                 digits = "".join(c * 2 for c in digits)
             channels = [int(digits[i:i + 2], 16) / 255 for i in (0, 2, 4)]
             linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
             return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

         def run(foreground, background):
             a, b = sorted((luminance(foreground), luminance(background)), reverse=True)
             ratio = (a + 0.05) / (b + 0.05)
             return {"ratio": round(ratio, 2), "aa": ratio >= 4.5, "aaa": ratio >= 7}
         ''',
         {"foreground": "#777777", "background": "#ffffff"},
         ({"foreground": "#000", "background": "#fff"}, {"ratio": 21.0, "aa": True, "aaa": True})),
    tool(C, "mix_colors", "Mix two hex colours by a weight (0 = first, 1 = second), in RGB.",
         {"first": ("string", "First hex colour."), "second": ("string", "Second hex colour."),
          "weight": ("number", "Share of the second colour.", 0.5)},
         '''
         def rgb(color):
             digits = color.lstrip("#")
             if len(digits) == 3:
                 digits = "".join(c * 2 for c in digits)
             return [int(digits[i:i + 2], 16) for i in (0, 2, 4)]

         def run(first, second, weight=0.5):
             mixed = [round(a + (b - a) * weight) for a, b in zip(rgb(first), rgb(second))]
             return {"hex": "#" + "".join(f"{c:02x}" for c in mixed), "rgb": mixed}
         ''',
         {"first": "#ff0000", "second": "#0000ff", "weight": 0.25},
         ({"first": "#000000", "second": "#ffffff"}, {"hex": "#808080", "rgb": [128, 128, 128]})),
)  # fmt: skip
