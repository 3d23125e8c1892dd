"""User text before it is stored or compared: what is kept of it, and when two texts are one.

Titles, names and options are shown side by side, and two of them that look alike must not pass
for different things (a spoofed option, a second "Pizza"). So:

- `normalized` is the text as stored: Unicode NFC, without the characters that render as nothing
  (soft hyphen, zero-width space, BOM, word joiner, fillers): what a reader sees is all there is.
  Joiners (ZWJ, ZWNJ) and variation selectors stay: emoji sequences and some scripts need them.
- `look_alike_key` is what two texts are compared by: NFKC (fullwidth and mathematical letters
  become plain ones), without any format character or variation selector, whitespace as single
  spaces, and each character that looks like a Latin letter or digit mapped to it — Cyrillic and
  Greek look-alikes, and the ASCII ones (0/O, 1/l/I, "rn"/"m") — a skeleton in the sense of
  Unicode TS #39 for look-alikes of Latin text. Two texts with the same key look the same.
- `handle_text` is a handle as typed by a person or an agent, before its pattern is checked:
  NFKC without format characters ("ｂｏｂ" and "b\u200bob" are "bob").
"""

from __future__ import annotations

import unicodedata

# Characters that render as nothing and have no use in a title, a name or an option.
INVISIBLE = frozenset(
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b\u180c\u180d\u180e\u180f\u200b\u200e\u200f"
    "\u2060\u2061\u2062\u2063\u2064\u206a\u206b\u206c\u206d\u206e\u206f\u3164\ufeff\uffa0\ufff9\ufffa\ufffb"
)
_DROP_INVISIBLE = dict.fromkeys(map(ord, INVISIBLE))


def normalized(text: str) -> str:
    """`text` as stored: NFC, without invisible characters."""
    if text.isascii():  # the common case, and nothing to do for it
        return text
    return unicodedata.normalize("NFC", text.translate(_DROP_INVISIBLE))


def _skeleton_table() -> dict[int, str]:
    pairs = {
        # Cyrillic
        "а": "a", "в": "b", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "ѕ": "s", "і": "i",
        "ј": "j", "ԁ": "d", "ԛ": "q", "ԝ": "w", "һ": "h", "ӏ": "l", "ү": "y", "ь": "b", "г": "r", "п": "n",
        "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C", "Т": "T",
        "Х": "X", "У": "Y", "Ѕ": "S", "І": "l", "Ј": "J", "Ԛ": "Q", "Ԝ": "W", "Һ": "h", "Ӏ": "l", "Ү": "Y",
        "З": "3", "Ь": "b", "б": "6",
        # Greek
        "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "l", "Κ": "K", "Μ": "M", "Ν": "N", "Ο": "O",
        "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X", "Ϝ": "F", "ο": "o", "ν": "v", "α": "a", "ι": "i", "κ": "k",
        "ρ": "p", "υ": "u", "χ": "x", "ϲ": "c", "ϳ": "j", "Ϲ": "C",
        # Armenian, Latin letters of other alphabets
        "օ": "o", "ս": "u", "ո": "n", "հ": "h", "ց": "g", "ı": "i", "ȷ": "j", "ɩ": "i", "ɡ": "g", "ɑ": "a",
        "ǀ": "l", "ℓ": "l",
        # ASCII that looks like other ASCII
        "0": "O", "1": "l", "I": "l", "|": "l",
    }
    return {ord(k): v for k, v in pairs.items()}


_SKELETON = _skeleton_table()


def look_alike_key(text: str) -> str:
    """What `text` is compared by (see the module's docstring): equal keys, texts that look alike."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
        text = "".join(ch for ch in text if not _invisible_in_key(ch))
    return " ".join(text.translate(_SKELETON).replace("rn", "m").split())


def _invisible_in_key(ch: str) -> bool:
    # Format characters (Cf: joiners, marks, BOM, tags), variation selectors, and the fillers.
    return ch in INVISIBLE or unicodedata.category(ch) == "Cf" or "\ufe00" <= ch <= "\ufe0f" \
        or "\U000e0100" <= ch <= "\U000e01ef"


def handle_text(text: str) -> str:
    """A handle as typed, before its pattern is checked: NFKC, without format characters."""
    if text.isascii():
        return text
    return "".join(ch for ch in unicodedata.normalize("NFKC", text) if not _invisible_in_key(ch))
