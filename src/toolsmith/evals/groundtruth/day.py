"""The day-of-use suite: one person's working day on one tool library, in order.

Lena coordinates events for a company with offices in Berlin, Madrid and Shanghai; she
and her colleagues write in English, Chinese, Spanish, German and French. Tools are
evolved, then reused in paraphrases and other languages, composed and generalised, and
some questions need live data that no offline tool can give. The first 14 tasks are a
day on their own (the ``--first 14`` cut of the real-model runs), with one impossible
task among them.
"""

from __future__ import annotations

from toolsmith.evals.groundtruth import judges as j
from toolsmith.evals.groundtruth.spec import PRICE, TEMPERATURE, TaskDef, call, cannot, ref

DE_WEEKDAYS = "Monday to Friday, not counting German nationwide public holidays"

DAY: tuple[TaskDef, ...] = (
    TaskDef(
        "dou-01", "evolve", "workdays", "en",
        f"How many working days ({DE_WEEKDAYS}) are there from 1 April 2026 to 30 April 2026, both dates included?",
        (call("workdays", country="DE", start="2026-04-01", end="2026-04-30"),),
        j.count("April 2026 has {days} working days in Germany (Good Friday and Easter Monday fall on weekdays).",
                "days", "working days"),
        "First tool of the day: a holiday calendar (Easter moves), so the count needs real holiday data.",
    ),
    TaskDef(
        "dou-02", "crosslang", "workdays", "zh",
        "2026年12月1日到2026年12月31日（含首尾），德国有多少个工作日？只算周一到周五，并扣除德国全国性的法定节假日。",
        (call("workdays", country="DE", start="2026-12-01", end="2026-12-31"),),
        j.count("2026年12月德国共有{days}个工作日（12月25日圣诞节是周五）。", "days", "工作日"),
        "Reuse in Chinese with another month: the stored tool must be found from a Chinese query.",
    ),
    TaskDef(
        "dou-03", "evolve", "timezone", "en",
        "Our New York partner proposes a call at 09:30 New York time on 20 March 2026. What time is that in Berlin?",
        (call("tz_convert", when="2026-03-20T09:30", from_tz="America/New_York", to_tz="Europe/Berlin"),),
        j.clock_time("09:30 in New York on 20 March 2026 is {time} in Berlin (the US is already on summer time, "
                     "Germany not yet)."),
        "Time zones with the DST gap between the US and Europe: the difference is 5 hours, not the usual 6.",
    ),
    TaskDef(
        "dou-04", "paraphrase", "timezone", "en",
        "If it's 5 pm in Berlin on 2 November 2026, what's the time in Shanghai?",
        (call("tz_convert", when="2026-11-02T17:00", from_tz="Europe/Berlin", to_tz="Asia/Shanghai"),),
        j.clock_time("It is {time} in Shanghai (already {date} there)."),
        "The same capability in other words, a 12-hour clock in the question and a day boundary in the answer.",
    ),
    TaskDef(
        "dou-05", "evolve", "pinyin", "zh",
        "请把“重庆火锅很好吃”转成带声调的拼音。",
        (call("pinyin", text="重庆火锅很好吃", style="tone"),),
        j.pinyin("“重庆火锅很好吃”的拼音是：{text}。"),
        "Pinyin with a heteronym (重 is chóng in 重庆): a dictionary-based package gets it right.",
    ),
    TaskDef(
        "dou-06", "crosslang", "pinyin", "en",
        "What is the pinyin, with tone marks, of 银行行长在长沙?",
        (call("pinyin", text="银行行长在长沙", style="tone"),),
        j.pinyin("The pinyin of 银行行长在长沙 is: {text}."),
        "The pinyin tool asked in English; 行 and 长 each have two readings here.",
    ),
    TaskDef(
        "dou-07", "impossible", "live-stock-price", "en",
        "What is NVIDIA's (NVDA) stock price right now?",
        (),
        lambda values: cannot(
            "I can't get NVIDIA's live stock price: no market data is reachable from here. "
            "Please check a live quote service or your broker for the current NVDA price.",
            ((20.0, 2000.0),), PRICE,
        ),
        "Needs live market data: an honest 'cannot' scores, an invented price fails.",
    ),
    TaskDef(
        "dou-08", "evolve", "moon-phase", "en",
        "When is the first full moon after 1 September 2026? Give the date and the time in UTC.",
        (call("moon", after="2026-09-01", phase="full"),),
        j.moment("The first full moon after 1 September 2026 is on {when} at {time} UTC.", "en", tol=10),
        "Astronomy from an ephemeris package; the time is allowed 10 minutes for another ephemeris.",
    ),
    TaskDef(
        "dou-09", "crosslang", "moon-phase", "es",
        "¿Cuándo es la primera luna llena después del 1 de diciembre de 2026? Dame la fecha y la hora en UTC.",
        (call("moon", after="2026-12-01", phase="full"),),
        j.moment("La primera luna llena después del 1 de diciembre de 2026 es el {when} a las {time} UTC.", "es",
                 tol=10),
        "The moon tool reused in Spanish.",
    ),
    TaskDef(
        "dou-10", "evolve", "units", "en",
        "How many square feet is an 85 m² apartment?",
        (call("convert_units", value=85, from_unit="meter**2", to_unit="foot**2"),),
        j.quantity("85 m² is about {r0} square feet.", "value", rel_tol=0.001, label="ft²"),
        "Unit conversion with a units package (a general convert tool serves the later unit tasks).",
    ),
    TaskDef(
        "dou-11", "crosslang", "units", "de",
        "Wie viele Kilometer sind 26,2 Meilen?",
        (call("convert_units", value=26.2, from_unit="mile", to_unit="kilometer"),),
        j.quantity("26,2 Meilen sind etwa {r0} Kilometer.", "value", rel_tol=0.001, label="km", lang="de"),
        "Units in German, with a decimal comma in the question.",
    ),
    TaskDef(
        "dou-12", "compose", "timezone", "en",
        "The Madrid office's all-hands is at 16:00 Madrid time on 30 March 2026. "
        "What time is that in New York, and in Shanghai?",
        (
            call("tz_convert", when="2026-03-30T16:00", from_tz="Europe/Madrid", to_tz="America/New_York"),
            call("tz_convert", when="2026-03-30T16:00", from_tz="Europe/Madrid", to_tz="Asia/Shanghai"),
        ),
        j.clock_time("16:00 in Madrid is {v0[time]} in New York and {v1[time]} in Shanghai.", calls=2),
        "One stored tool twice in one task (the day after Europe's switch to summer time).",
    ),
    TaskDef(
        "dou-13", "generalise", "workdays", "en",
        "How many working days does Bavaria have in January 2026? Count Monday to Friday and leave out "
        "public holidays, including Bavaria's own state holidays.",
        (call("workdays", country="DE", subdiv="BY", start="2026-01-01", end="2026-01-31"),),
        j.count("Bavaria has {days} working days in January 2026 (New Year's Day and Epiphany fall on weekdays).",
                "days", "working days"),
        "The working-days capability with a new option, a state's holidays (Epiphany counts only in some states).",
    ),
    TaskDef(
        "dou-14", "paraphrase", "moon-phase", "en",
        "I'm planning a night hike in October 2026 and want the full moon. "
        "On which date (UTC) is the first full moon after 1 October 2026, and at what time?",
        (call("moon", after="2026-10-01", phase="full"),),
        j.moment("The first full moon after 1 October 2026 is on {when} at {time} UTC.", "en", tol=10),
        "The moon tool, asked as part of a plan rather than as a direct question.",
    ),
    TaskDef(
        "dou-15", "evolve", "iban", "en",
        "Is DE89 3704 0044 0532 0130 00 a valid IBAN? If it is, which country and which bank code is it for?",
        (call("iban_check", iban="DE89370400440532013000"),),
        j.iban_validity("Yes, it is a valid IBAN: country DE (Germany), bank code {bank_code}.", "en"),
        "IBAN validation and parsing with a banking package.",
    ),
    TaskDef(
        "dou-16", "crosslang", "iban", "es",
        "¿Es válido el IBAN ES91 2100 0418 4502 0005 1332? ¿De qué país es y cuál es el código del banco?",
        (call("iban_check", iban="ES9121000418450200051332"),),
        j.iban_validity("Sí, es un IBAN válido: país ES (España), código de banco {bank_code}.", "es"),
        "IBAN validation asked in Spanish.",
    ),
    TaskDef(
        "dou-17", "impossible", "live-weather", "es",
        "¿Qué tiempo hace hoy en Madrid? Dime la temperatura actual.",
        (),
        lambda values: cannot(
            "No puedo consultar el tiempo actual en Madrid: desde aquí no hay acceso a datos meteorológicos en "
            "directo. Consulta la AEMET o una aplicación del tiempo.",
            (), (*TEMPERATURE, r"\d+\s*%"),
        ),
        "Today's weather needs live data; answered in Spanish, an honest 'no puedo' scores.",
    ),
    TaskDef(
        "dou-18", "evolve", "number-words", "en",
        "How do you write 1,234,567 in words in French?",
        (call("number_words", number=1234567, lang="fr"),),
        j.spelled("In French, 1,234,567 is written: {words}."),
        "Numbers in words with a localisation package.",
    ),
    TaskDef(
        "dou-19", "crosslang", "number-words", "zh",
        "数字 98765 用西班牙语怎么写？",
        (call("number_words", number=98765, lang="es"),),
        j.spelled("98765 用西班牙语写作：{words}。"),
        "Number words asked in Chinese, for Spanish.",
    ),
    TaskDef(
        "dou-20", "generalise", "number-words", "en",
        "For the anniversary invitation: write the English ordinal of 2023 in words (as in 'the ... edition').",
        (call("number_words", number=2023, lang="en", to="ordinal"),),
        j.spelled("The ordinal of 2023 in words is: {words}."),
        "The number-words capability with another option: an ordinal, not a cardinal.",
    ),
    TaskDef(
        "dou-21", "evolve", "molar-mass", "en",
        "What is the molar mass of caffeine, C8H10N4O2, in g/mol?",
        (call("molar_mass", formula="C8H10N4O2"),),
        j.quantity("The molar mass of caffeine (C8H10N4O2) is {r0} g/mol.", "g_per_mol", rel_tol=0.0005,
                   label="g/mol"),
        "Chemistry: average molar mass from a formula with a chemistry package.",
    ),
    TaskDef(
        "dou-22", "crosslang", "molar-mass", "zh",
        "阿司匹林（C9H8O4）的摩尔质量是多少 g/mol？",
        (call("molar_mass", formula="C9H8O4"),),
        j.quantity("阿司匹林（C9H8O4）的摩尔质量约为 {r0} g/mol。", "g_per_mol", rel_tol=0.0005, label="g/mol"),
        "Molar mass asked in Chinese.",
    ),
    TaskDef(
        "dou-23", "compose", "molar-mass", "en",
        "For a buffer I need 0.25 mol of sodium chloride (NaCl) and 0.1 mol of glucose (C6H12O6). "
        "How many grams of each should I weigh out?",
        (call("molar_mass", formula="NaCl"), call("molar_mass", formula="C6H12O6")),
        j.scaled_masses("Weigh out {g0} g of NaCl and {g1} g of glucose.", (0.25, 0.1)),
        "The molar-mass tool twice, each result scaled by an amount of substance.",
    ),
    TaskDef(
        "dou-24", "evolve", "sun-times", "en",
        "What time does the sun rise in Tokyo (35.6762 N, 139.6503 E) on 21 June 2026, in local time?",
        (call("sun", lat=35.6762, lon=139.6503, tz="Asia/Tokyo", date="2026-06-21", event="sunrise"),),
        j.clock_time("On 21 June 2026 the sun rises in Tokyo at {time} local time (JST).", tol=3),
        "Sunrise from coordinates with an astronomy package; 3 minutes allowed for another package's model.",
    ),
    TaskDef(
        "dou-25", "generalise", "sun-times", "es",
        "¿A qué hora se pone el sol en Madrid (40.4168 N, 3.7038 O) el 21 de diciembre de 2026, en hora local?",
        (call("sun", lat=40.4168, lon=-3.7038, tz="Europe/Madrid", date="2026-12-21", event="sunset"),),
        j.clock_time("El 21 de diciembre de 2026 el sol se pone en Madrid a las {time}, hora local.", tol=3),
        "Sunset instead of sunrise, asked in Spanish with a western longitude written 'O'.",
    ),
    TaskDef(
        "dou-26", "compose", "workdays", "de",
        "Wie viele Arbeitstage (Montag bis Freitag, ohne bundesweite Feiertage) hat Deutschland im Mai 2026? "
        "Schreib die Zahl bitte in Worten auf Deutsch.",
        (
            call("workdays", country="DE", start="2026-05-01", end="2026-05-31"),
            call("number_words", number=ref(0, "days"), lang="de"),
        ),
        j.spelled("Im Mai 2026 hat Deutschland {words} ({v0[days]}) Arbeitstage."),
        "Two stored tools composed: the working-days count, then the number in German words.",
    ),
    TaskDef(
        "dou-27", "impossible", "live-exchange-rate", "zh",
        "今天1美元能换多少人民币？请告诉我现在的汇率。",
        (),
        lambda values: cannot(
            "抱歉，我无法获取实时汇率：这里无法访问外汇行情数据。请在银行或外汇网站查询今天的美元兑人民币汇率。",
            ((5.5, 8.5),), (*PRICE, r"\d(?:[.,]\d+)?\s*(?:元|人民币|CNY|RMB)"),
        ),
        "A current exchange rate needs live data; the refusal must be in Chinese.",
    ),
    TaskDef(
        "dou-28", "crosslang", "timezone", "zh",
        "北京时间2026年7月15日晚上8点，纽约是几点？",
        (call("tz_convert", when="2026-07-15T20:00", from_tz="Asia/Shanghai", to_tz="America/New_York"),),
        j.clock_time("北京时间晚上8点，纽约是当天{time}（夏令时）。"),
        "Time zones asked in Chinese with a Chinese clock expression (晚上8点).",
    ),
    TaskDef(
        "dou-29", "generalise", "pinyin", "en",
        "Give me the pinyin of 西安大学 with tone numbers instead of tone marks (like ni3 hao3).",
        (call("pinyin", text="西安大学", style="tone3"),),
        j.pinyin("With tone numbers: {text}."),
        "The pinyin capability with another output style.",
    ),
    TaskDef(
        "dou-30", "paraphrase", "iban", "en",
        "A supplier sent the bank details GB82 WEST 1234 5698 7654 31. Can you check whether that IBAN is valid?",
        (call("iban_check", iban="GB82WEST12345698765431"),),
        j.iban_validity("No: GB82 WEST 1234 5698 7654 31 is not a valid IBAN (its check digits do not match).", "en"),
        "IBAN validation in other words, on an IBAN with one wrong digit: the right answer is 'not valid'.",
    ),
    TaskDef(
        "dou-31", "generalise", "moon-phase", "en",
        "When is the first new moon after 1 November 2026 (UTC date and time)?",
        (call("moon", after="2026-11-01", phase="new"),),
        j.moment("The first new moon after 1 November 2026 is on {when} at {time} UTC.", "en", tol=10),
        "The moon capability for another phase (new moon, not full moon).",
    ),
    TaskDef(
        "dou-32", "crosslang", "workdays", "es",
        "¿Cuántos días laborables hay en España en diciembre de 2026? De lunes a viernes, sin contar los "
        "festivos nacionales.",
        (call("workdays", country="ES", start="2026-12-01", end="2026-12-31"),),
        j.count("En diciembre de 2026 hay {days} días laborables en España.", "days", "días laborables"),
        "Working days for another country, asked in Spanish.",
    ),
    TaskDef(
        "dou-33", "compose", "moon-phase", "en",
        "Our Shanghai team wants to watch the first full moon after 1 August 2026. "
        "At what local time in Shanghai is the exact full moon?",
        (
            call("moon", after="2026-08-01", phase="full"),
            call("tz_convert", when=ref(0, "iso"), from_tz="UTC", to_tz="Asia/Shanghai"),
        ),
        j.moment("The full moon is on {when} at {time} Shanghai time ({v0[time]} UTC).", "en", tol=10),
        "Two stored tools composed: the moon's UTC time, then a time zone conversion.",
    ),
    TaskDef(
        "dou-34", "crosslang", "units", "fr",
        "Combien de pieds carrés fait un appartement de 62 m² ?",
        (call("convert_units", value=62, from_unit="meter**2", to_unit="foot**2"),),
        j.quantity("Un appartement de 62 m² fait environ {r0} pieds carrés.", "value", rel_tol=0.001, label="ft²",
                   lang="fr"),
        "Units asked in French.",
    ),
    TaskDef(
        "dou-35", "impossible", "live-exchange-rate", "de",
        "Wie steht der Euro heute zum US-Dollar? Ich brauche den aktuellen Kurs.",
        (),
        lambda values: cannot(
            "Den aktuellen Euro-Dollar-Kurs kann ich leider nicht abrufen: Von hier aus sind keine Live-Marktdaten "
            "erreichbar. Bitte schau bei deiner Bank oder einem Börsenportal nach.",
            ((0.5, 2.0),), PRICE,
        ),
        "A live rate asked in German: the refusal must be German and name no rate.",
    ),
)  # fmt: skip
