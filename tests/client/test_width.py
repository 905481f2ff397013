"""Wide characters (CJK, emoji) in names and chat: rows measured in terminal columns,
broken between words with the indent kept, the title bar's help hint always shown."""

from __future__ import annotations

from prompt_toolkit.utils import get_cwidth

from client.width import clip, pad, wrap
from protocol.messages import AiSpec, Create
from tests.client.terminal import full_screen

NAME = "山田太郎山田太郎山田太郎"
CHAT = "你好你好你好你好你好你好你好你好你好你好你好 is it ok to go now? 😀😀😀 yes"


def test_wrap_counts_columns_and_breaks_between_words() -> None:
    rows = wrap(f"you: {CHAT}", 37)
    assert all(get_cwidth(row) <= 37 for row in rows)
    assert all(row.startswith("  ") for row in rows[1:])
    words = " ".join(row.strip() for row in rows).split()
    assert "ok" in words
    assert "to" in words
    assert "".join(rows).replace(" ", "") == f"you:{CHAT}".replace(" ", "")


def test_clip_and_pad_measure_columns() -> None:
    assert clip(NAME, 11) == "山田太郎山…"  # 10 columns and the ellipsis
    assert get_cwidth(pad("山田", 11)) == 11
    assert clip("Bob", 11) == "Bob"


async def test_a_wide_name_and_chat_keep_the_screen_whole(url: str) -> None:
    async with full_screen(url, NAME, Create(ai=AiSpec(level=1))) as alice:
        await alice.at(0)
        alice.type(f"chat {CHAT}\r")
        screen = await alice.showing("yes")
        assert screen[0].endswith("(F1: help)")  # the name cut short, not the hint
        chat = next(i for i, row in enumerate(screen) if "you: " in row)
        tail = [row.split("│")[-1] for row in screen[chat + 1 : chat + 3]]
        assert all(row.startswith("  ") for row in tail), tail
        assert any(" ok to go" in row for row in screen[chat : chat + 3])


async def test_a_terminal_too_small_says_the_size_it_needs(url: str) -> None:
    """60x20 showed prompt_toolkit's bare 'Window too small...'."""
    async with full_screen(url, "Alice", Create(ai=AiSpec(level=1)), size=(60, 20)) as alice:
        await alice.at(0)
        screen = await alice.showing("80x24")
        told = "This terminal is 60x20: too small for this board (80x24 fits every board;"
        assert told in " ".join(screen)
        assert all(len(row) <= 60 for row in screen)
