"""A run tagged as a rejudge (``compare --rejudge``) keeps its tag in its configuration and is
found by its id, never as ``latest`` or ``previous`` (SQLite and PostgreSQL)."""

from __future__ import annotations

from checkweigh.store import Store

CONFIG = {"rubrics": [{"name": "completion", "weights": {"polite": 1.0}}], "judge": "openai:a"}


def test_a_rejudge_is_found_by_its_id_only(store: Store) -> None:
    base = store.create_run("support", "s.yaml", CONFIG, 1)
    cand = store.create_run("support", "s.yaml", {**CONFIG, "judge": "openai:b"}, 1)
    rejudged = store.create_run("support", "s.yaml", {**CONFIG, "judge": "openai:b"}, 1)
    tag = {"base": base, "judged_as": cand, "judge": "openai:b"}
    store.tag_run(rejudged, "rejudge", tag)
    assert store.get_run(rejudged).config == {**CONFIG, "judge": "openai:b", "rejudge": tag}
    assert store.get_run(rejudged[:-1]).id == rejudged
    assert (store.get_run("previous").id, store.get_run("latest").id) == (base, cand)
    assert [r.id for r in store.list_runs(suite="support")] == [rejudged, cand, base]
    # a configuration holding other JSON values, null included, is no rejudge
    other = store.create_run("support", "s.yaml", {**CONFIG, "agent_source": None}, 1)
    assert store.get_run("latest").id == other
