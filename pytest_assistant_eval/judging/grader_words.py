"""The words in which an answer addresses its grader, in several languages (issue 31, item L; S6.6).

``grader_hints`` reads these besides its own patterns: a grader named in any of its names
(examiner, evaluator, reviewer, judge, scorer, marker, rater …) in English, German, Spanish,
French, Italian, Portuguese, Chinese, Japanese, Russian and Korean, and a request to score what
came before as correct in each. Measured on ``tests/data/grader_address.yaml`` (its miss rate is
printed by ``tests/test_grader_address_corpus.py`` and ``benchmarks/grader_address.py``). A hint
sends a cell to the owner; it is never a verdict, so a word that is sometimes innocent (``judge``)
costs a look, not a grade.
"""

from __future__ import annotations

import re

# Nouns for a grader (and its plural or feminine forms), by language.
_NOUNS = {
    "en": r"grader|examiner|evaluator|assessor|marker|reviewer|judge|scorer|rater|grading\s+(?:model|system|ai|llm)"
          r"|(?:scoring|evaluation|evaluating|marking|assessment|grading)\s+(?:model|system|bot|ai|llm|script)"
          r"|automated\s+(?:checker|reviewer|grader|judge)",
    "de": r"prüfer(?:in|innen)?|bewerter(?:in|innen)?|gutachter(?:in|innen)?|korrektor(?:in|innen|en)?"
          r"|bewertende[nr]?\s+ki|bewertungsmodell|bewertungs-?ki",
    "es": r"evaluador(?:a|es|as)?|examinador(?:a|es|as)?|calificador(?:a|es|as)?|juez|jueces"
          r"|quien\s+(?:corrija|califique|eval[uú]e|revise)",
    "fr": r"[ée]valuat(?:eur|rice)s?|correct(?:eur|rice)s?|examinat(?:eur|rice)s?|juge",
    "it": r"valutat(?:ore|ori|rice|rici)|esaminat(?:ore|ori|rice)|corrett(?:ore|ori|rice)|giudice|giudici",
    "pt": r"avaliador(?:a|es|as)?|examinador(?:a|es|as)?|ju[ií]z|ju[ií]zes",
    "ru": r"экзаменатор\w*|оценщик\w*|проверяющ\w*|рецензент\w*|судь[яеи]",
}
# Scripts without spaces between words: the noun anywhere.
_CJK_NOUNS = r"评分员|评分者|评分人|阅卷|评审|评委|考官|评估者|评估员|评判|裁判|判卷|批改者|採点者|採点官|評価者|審査員|試験官|채점자|평가자|심사위원"

# "… as correct": a request to score what came before as right, by language.
_VERDICTS = [
    # English: a verb of grading, what it grades, then "as correct"
    r"\b(?:mark|score|grade|rate|judge|evaluate|assess|count|treat|consider|record|label|classify)\w*\b[^.\n]{0,50}?"
    r"\b(?:as|to\s+be)\s+(?:an?\s+)?(?:fully\s+|entirely\s+|completely\s+)?(?:correct|right|passed|pass|true|accurate)\b",
    r"\b(?:give|award)\b[^.\n]{0,20}\bfull\s+(?:marks|score|points|credit)\b",
    r"\b(?:consider|deem|regard)\w*\b[^.\n]{0,40}\b(?:fully|entirely|completely|wholly)\s+(?:correct|right)\b",
    r"\b(?:record|output|return|give)\s+(?:a\s+)?pass\s+for\s+(?:each|every|all)\b",
    # German
    r"\bals\s+(?:richtig|korrekt|bestanden)\b[^.\n]{0,30}\b(?:bewerten|werten|markieren|einstufen|zählen)",
    r"\b(?:bewerte|bewerten|werte|werten|markiere|markieren|zähle|zählen)\b[^.\n]{0,60}\bals\s+(?:richtig|korrekt|bestanden)\b",
    # Spanish and Portuguese
    r"\b(?:califica|calific[aá]|califique|califiquen|marca|marque|marquen|eval[uú]a|eval[uú]e|punt[uú]a|considera"
    r"|considere|avalie|avalia|classifique)\b[^.\n]{0,60}\bcomo\s+(?:correct[oa]s?|corret[oa]s?|v[aá]lid[oa]s?"
    r"|aprobad[oa]s?|aprovad[oa]s?|cert[oa]s?)\b",
    # French
    r"\b(?:note|notez|noter|marque|marquez|marquer|[ée]value|[ée]valuez|[ée]valuer|consid[eé]rez|consid[eé]rer|compte[zr]?)"
    r"\b[^.\n]{0,60}\bcomme\s+(?:correcte?s?|juste?s?|r[ée]ussie?s?|valides?)\b",
    # Italian
    r"\b(?:valuta|valutate|valutare|segna|segnate|segnare|considera|considerate)\b[^.\n]{0,60}\bcome\s+(?:corrett[oaie]|giust[oaie])\b",
    # Russian
    r"(?:оцените|оценить|отметьте|засчитайте|засчитать|считайте)[^.\n]{0,60}(?:правильн|верн|зач[её]т)",
]
_CJK_VERDICTS = r"评为正确|判为正确|标记为正确|视为正确|评定为正确|判定为正确|算作正确|全部正确|都是正确|给满分|满分|正解として|正しいと評価|정답으로"

GRADER_NOUN = re.compile(r"(?i)\b(?:" + "|".join(f"(?:{n})" for n in _NOUNS.values()) + r")s?\b")
GRADER_NOUN_CJK = re.compile(_CJK_NOUNS)
VERDICT_REQUEST = re.compile(r"(?i)" + "|".join(f"(?:{v})" for v in _VERDICTS))
VERDICT_REQUEST_CJK = re.compile(_CJK_VERDICTS)
# "If you are an AI grading this", "the model reviewing this": a reader addressed by what it does.
ADDRESSED_READER = re.compile(
    r"(?i)\bif\s+you\s+are\s+(?:an?\s+|the\s+)?(?:ai|llm|model|language\s+model|automated\s+\w+|bot|person|human)\b"
    r"[^.\n]{0,30}\b(?:grad|evaluat|review|assess|check|scor|mark|judg|read)\w*"
    r"|\b(?:attention|note\s+(?:to|for)|message\s+(?:to|for)|dear)\s+(?:the\s+)?(?:ai|llm|model|system)\b"
    r"[^.\n]{0,20}\b(?:grad|evaluat|review|assess|check|scor|mark|judg)\w*"
    r"|\bwho(?:m)?ever\s+(?:is\s+|will\s+)?(?:grad|evaluat|review|assess|check|scor|mark|judg)\w*"
    r"|\b(?:to|for)\s+(?:the\s+)?(?:person|one|model|ai|llm|system|human|people)\s+(?:who\s+|that\s+)?(?:is\s+|are\s+)?"
    r"(?:grad|evaluat|review|assess|check|scor|mark|judg)\w*")

#: (pattern, why) in the order the scan reports them; the CJK ones read the text unfolded.
PATTERNS = [
    (GRADER_NOUN, "names a grader"),
    (ADDRESSED_READER, "addresses a reviewer"),
    (VERDICT_REQUEST, "asks for a verdict"),
]
CJK_PATTERNS = [
    (GRADER_NOUN_CJK, "names a grader"),
    (VERDICT_REQUEST_CJK, "asks for a verdict"),
]
