"""The evolve-then-reuse pairs: a tool is built for one task, then found again for a
paraphrase or another language with other arguments. Their families differ from the
day of use's, so the two suites can run on one library without helping each other.
"""

from __future__ import annotations

from toolsmith.evals.groundtruth import judges as j
from toolsmith.evals.groundtruth.spec import TaskDef, call

PAIRS: tuple[TaskDef, ...] = (
    TaskDef(
        "pair-01", "evolve", "isbn", "en",
        "Convert the ISBN-10 0-306-40615-2 to its ISBN-13.",
        (call("isbn13", isbn10="0-306-40615-2"),),
        j.code("The ISBN-13 of 0-306-40615-2 is {isbn13}.", "isbn13"),
        "ISBN conversion: a new check digit is computed for the 978 prefix.",
    ),
    TaskDef(
        "pair-02", "crosslang", "isbn", "zh",
        "请把 ISBN-10 号码 0-19-852663-6 转换成 ISBN-13。",
        (call("isbn13", isbn10="0-19-852663-6"),),
        j.code("0-19-852663-6 对应的 ISBN-13 是 {isbn13}。", "isbn13"),
        "The ISBN tool asked in Chinese.",
    ),
    TaskDef(
        "pair-03", "evolve", "phone-numbers", "en",
        "Is +49 30 901820 a valid phone number? Is it a mobile or a fixed line, and what is its E.164 form?",
        (call("phone", number="+49 30 901820"),),
        j.phone("Yes, it is a valid number: a fixed line in Germany (region {region}); E.164: {e164}.", "en"),
        "Phone number parsing with the numbering-plan metadata of a phone package.",
    ),
    TaskDef(
        "pair-04", "crosslang", "phone-numbers", "es",
        "¿Es válido el número +34 612 345 678? ¿Es un móvil o un fijo? Escríbelo en formato E.164.",
        (call("phone", number="+34 612 345 678"),),
        j.phone("Sí, es un número válido: un móvil de España; en formato E.164 es {e164}.", "es"),
        "The phone tool asked in Spanish, for a mobile number.",
    ),
    TaskDef(
        "pair-05", "evolve", "country-codes", "en",
        "What are the ISO 3166-1 alpha-3 and numeric codes of Côte d'Ivoire?",
        (call("country", name="Côte d'Ivoire"),),
        j.codes("Côte d'Ivoire: alpha-3 {alpha_3}, numeric {numeric}.", ("alpha_3", "numeric")),
        "Country codes from the ISO 3166 data of a country package.",
    ),
    TaskDef(
        "pair-06", "crosslang", "country-codes", "de",
        "Welche ISO-3166-1-Codes (Alpha-2, Alpha-3 und numerisch) hat Neuseeland?",
        (call("country", name="New Zealand"),),
        j.codes("Neuseeland: Alpha-2 {alpha_2}, Alpha-3 {alpha_3}, numerisch {numeric}.",
                ("alpha_2", "alpha_3", "numeric")),
        "Country codes asked in German, with the country's German name.",
    ),
    TaskDef(
        "pair-07", "evolve", "geodesic", "en",
        "What is the geodesic distance (WGS-84 ellipsoid) in km between Paris (48.8566, 2.3522) and "
        "Tokyo (35.6762, 139.6503)?",
        (call("geodesic_km", a=[48.8566, 2.3522], b=[35.6762, 139.6503]),),
        j.quantity("The geodesic distance between Paris and Tokyo is about {r0} km.", "km", rel_tol=0.001,
                   label="km", digits=1),
        "Distance on the ellipsoid: a spherical formula is off by more than the 0.1% allowed.",
    ),
    TaskDef(
        "pair-08", "crosslang", "geodesic", "zh",
        "北京（39.9042, 116.4074）到上海（31.2304, 121.4737）的测地线距离（WGS-84 椭球）是多少公里？",
        (call("geodesic_km", a=[39.9042, 116.4074], b=[31.2304, 121.4737]),),
        j.quantity("北京到上海的测地线距离约为 {r0} 公里。", "km", rel_tol=0.001, label="km", digits=1),
        "The distance tool asked in Chinese.",
    ),
    TaskDef(
        "pair-09", "evolve", "easter", "en",
        "On what date is (Western) Easter Sunday in 2031?",
        (call("easter", year=2031),),
        j.day("Easter Sunday 2031 is on {when}.", "en"),
        "Easter dates from a date package's computus.",
    ),
    TaskDef(
        "pair-10", "crosslang", "easter", "es",
        "¿En qué fecha cae el Domingo de Pascua (occidental) en 2035?",
        (call("easter", year=2035),),
        j.day("En 2035 el Domingo de Pascua cae el {when}.", "es"),
        "Easter asked in Spanish for another year.",
    ),
    TaskDef(
        "pair-11", "evolve", "lunar-calendar", "zh",
        "农历2030年八月十五（中秋节）是公历哪一天？",
        (call("lunar_to_solar", year=2030, month=8, day=15),),
        j.day("农历2030年八月十五是公历{when}。", "zh"),
        "Chinese lunar calendar to Gregorian with a lunar-calendar package.",
    ),
    TaskDef(
        "pair-12", "crosslang", "lunar-calendar", "en",
        "On which Gregorian date does Chinese New Year (the 1st day of the 1st lunar month) fall in 2031?",
        (call("lunar_to_solar", year=2031, month=1, day=1),),
        j.day("Chinese New Year 2031 falls on {when}.", "en"),
        "The lunar calendar tool asked in English.",
    ),
)  # fmt: skip
