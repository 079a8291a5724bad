"""bench/llm_tokens runs and reports every command (figures are estimates, never asserted)."""

from __future__ import annotations

from bench.llm_tokens import measure, render


async def test_the_token_benchmark_runs() -> None:
    rows, sizes = await measure()
    assert [r.command for r in rows][-3:] == ["resolver", "intent", "yes/no"]
    assert all(r.calls >= 1 and r.total > 0 for r in rows)
    assert rows[0].cache_write_tokens > 0 and rows[1].cache_read_tokens > 0
    assert "ESTIMATED" in render(rows, sizes)
