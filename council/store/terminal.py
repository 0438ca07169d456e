"""Text, not control, for a terminal: what a model, a server or a planted file wrote, made
safe to print or to write into a file a terminal shows (progress.log, which users `tail -f`).

Every control character but newline and tab is shown as a visible escape (`\\x1b`), so an
OSC 52 (which writes the clipboard), a CSI 2J (which clears the screen), a carriage return
that overwrites a line or a bell stays text: C0 controls (ESC among them), DEL, the C1
controls (0x9b is a CSI on its own on some terminals) and the Unicode bidirectional overrides
and isolates, which reorder what a line seems to say (`\\u202e`). Markup is not this module's
business: rich renders what it is handed as Text, never as markup (views/).

Imported by the hooks' event writer (progress.py), so it imports nothing: one translation
table, made once."""

from __future__ import annotations

_KEEP = frozenset("\n\t")
_BIDI = (*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C)
_TABLE = {code: f"\\x{code:02x}"
          for code in (*range(0x20), 0x7F, *range(0x80, 0xA0)) if chr(code) not in _KEEP}
_TABLE.update({code: f"\\u{code:04x}" for code in _BIDI})


def safe(text: str) -> str:
    """`text` with every control character but newline and tab, and every bidirectional
    override, as a visible escape: `"\\x1b]52;c;…"` for an ESC."""
    return text.translate(_TABLE)

