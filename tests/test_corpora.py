import pytest

from cadlib import corpora
from cadlib.corpora import CorpusUnavailable, EditCase, load_corpus, seeded_subset
from cadlib.oracle import oracle_program
from cadlib.resolver import resolve


@pytest.fixture
def offline(monkeypatch):
    monkeypatch.setattr(corpora, "_hub_reachable", lambda: False)


def test_humanevalfix_python_from_the_local_mirror(humanevalpack_dir, offline):
    corpus = load_corpus("heval-fix-py", local_dir=humanevalpack_dir)
    assert len(corpus) == 164
    assert corpus.source.startswith("local:")
    case = corpus[0]
    assert case.id == "Python/0" and case.doc != case.gold
    assert case.instruction == "Fix bugs in has_close_elements."
    assert {"prompt", "test", "entry_point", "language"} <= set(case.meta)


@pytest.mark.parametrize("name", ["heval-fix-py", "heval-fix-js"])
def test_all_humanevalfix_cases_round_trip_byte_exactly(name, humanevalpack_dir, offline):
    corpus = load_corpus(name, local_dir=humanevalpack_dir)
    assert all(resolve(oracle_program(c.doc, c.gold), c.doc) == c.gold for c in corpus)


def test_unknown_corpus_lists_valid_names():
    with pytest.raises(ValueError, match="heval-fix-py, heval-fix-js"):
        load_corpus("heval-fix-cobol")


def test_no_hub_and_no_mirror_is_a_clear_error(offline, monkeypatch, tmp_path):
    monkeypatch.delenv(corpora.HUMANEVALPACK_ENV, raising=False)
    monkeypatch.setattr(corpora, "humanevalpack_default_dir", lambda: tmp_path / "none")
    with pytest.raises(CorpusUnavailable, match=corpora.HUMANEVALPACK_ENV):
        load_corpus("heval-fix-py")


def test_the_mirror_beside_the_repository_is_the_default(offline, monkeypatch, tmp_path):
    """The README's chapter command runs without the Makefile's variable (issue 36.8)."""
    monkeypatch.delenv(corpora.HUMANEVALPACK_ENV, raising=False)
    monkeypatch.setenv("CADLIB_ROOT", str(tmp_path / "repo"))
    assert corpora.humanevalpack_default_dir() == tmp_path / "shared" / "data" / "humanevalpack"
    mirror = corpora.humanevalpack_default_dir()
    mirror.mkdir(parents=True)
    (mirror / "python.jsonl").write_text(
        '{"task_id": "Python/0", "buggy_solution": "a", "canonical_solution": "b", '
        '"entry_point": "f", "prompt": "", "test": ""}\n'
    )
    corpus = load_corpus("heval-fix-py")
    assert corpus.source == f"local:{mirror / 'python.jsonl'}" and len(corpus) == 1


def test_missing_mirror_file_is_named(offline, tmp_path):
    with pytest.raises(CorpusUnavailable, match="python.jsonl"):
        load_corpus("heval-fix-py", local_dir=tmp_path)


def test_hub_is_tried_first_when_reachable(monkeypatch, tmp_path):
    (tmp_path / "hub.jsonl").write_text(
        '{"task_id": "Python/0", "buggy_solution": "a", "canonical_solution": "b", '
        '"entry_point": "f"}\n'
    )
    calls = []

    def fake_download(repo, filename, repo_type):
        calls.append((repo, filename, repo_type))
        return str(tmp_path / "hub.jsonl")

    import huggingface_hub

    monkeypatch.setattr(corpora, "_hub_reachable", lambda: True)
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", fake_download)
    corpus = load_corpus("heval-fix-py", local_dir="/nonexistent")
    assert calls == [("bigcode/humanevalpack", "data/python/data/humanevalpack.jsonl", "dataset")]
    assert corpus.source.startswith("hub:") and corpus[0].gold == "b"


def test_seeded_subsets_are_seeded_and_keep_corpus_order():
    cases = [EditCase(f"Python/{k}", "a\nb", "a\nc", "fix") for k in range(40)]
    a = seeded_subset(cases, 10, seed=0)
    assert a == seeded_subset(list(reversed(cases)), 10, seed=0)[::-1]  # order-free rule
    assert len(a) == 10 and a != seeded_subset(cases, 10, seed=1)
    assert [int(c.id.split("/")[1]) for c in a] == sorted(int(c.id.split("/")[1]) for c in a)
    assert seeded_subset(cases, None) == cases and seeded_subset(cases, 99) == cases


def test_translations_of_a_task_share_their_rank():
    assert corpora.split_key("JavaScript/7") == corpora.split_key("Python/7") == "humanevalpack/7"
    assert corpora.split_key("probeedit/notes/rename-term") == "probeedit/notes/rename-term"
    assert corpora.case_rank(0, "Python/7") == corpora.case_rank(0, "Rust/7")
    assert corpora.case_rank(0, "Python/7") != corpora.case_rank(1, "Python/7")


# -- real edits (Flask) ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def realedits_dir():
    import os

    from cadlib.paths import repo_root

    folder = os.environ.get(corpora.REALEDITS_ENV) or repo_root() / "../shared/data/realedits"
    if not os.path.isfile(os.path.join(folder, "flask.jsonl")):
        pytest.skip(f"no flask.jsonl in {folder} ({corpora.REALEDITS_ENV})")
    return folder


def test_realedits_flask_loads_every_commit_file(realedits_dir):
    corpus = load_corpus("realedits-flask", local_dir=realedits_dir)
    assert len(corpus) == 300 and corpus.source.startswith("local:")
    assert corpus.source.endswith("flask.jsonl")
    assert len({c.id for c in corpus}) == 300
    case = corpus[0]
    assert case.id.startswith(case.meta["commit"][:10]) and case.id.endswith(case.meta["path"])
    assert case.instruction and case.doc != case.gold and case.meta["project"] == "flask"
    assert all(resolve(oracle_program(c.doc, c.gold), c.doc) == c.gold for c in corpus)


@pytest.mark.parametrize("name", corpora.REALEDITS_TEST)
def test_realedits_test_corpora_load_and_resolve(realedits_dir, name):
    """The two test corpora load like Flask; their oracle programs resolve to every gold."""
    corpus = load_corpus(name, local_dir=realedits_dir)
    project = corpora.REALEDITS_PROJECTS[name]
    assert len(corpus) == 300 and corpus.source.endswith(f"{project}.jsonl")
    assert {c.meta["project"] for c in corpus} == {project}
    assert name in corpora.CORPUS_LABELS
    assert all(resolve(oracle_program(c.doc, c.gold), c.doc) == c.gold for c in corpus)


def test_realedits_default_folder_is_beside_the_repository(realedits_dir, monkeypatch):
    from pathlib import Path

    from cadlib.paths import repo_root

    monkeypatch.delenv(corpora.REALEDITS_ENV, raising=False)
    if not (repo_root() / "../shared/data/realedits/flask.jsonl").is_file():
        pytest.skip("no ../shared/data/realedits beside the repository root")
    corpus = load_corpus("realedits-flask")
    assert Path(corpus.source.removeprefix("local:")).parent.name == "realedits"


def test_realedits_missing_folder_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv(corpora.REALEDITS_ENV, str(tmp_path))
    with pytest.raises(CorpusUnavailable, match=f"flask.jsonl.*{corpora.REALEDITS_ENV}"):
        load_corpus("realedits-flask")


# The held-out split (chapters 7 and 8)


def fake_ids_corpus(prefix, n):
    return [EditCase(f"{prefix}/{k}", "a\nb", "a\nc", "fix") for k in range(n)]


def test_split_is_disjoint_complete_and_stable():
    cases = fake_ids_corpus("Python", 164)
    ids = [c.id for c in cases]
    held = corpora.held_out_ids(ids, seed=0)
    assert held == corpora.held_out_ids(list(reversed(ids)), seed=0)[::-1]  # order-free rule
    assert corpora.held_out_ids(ids, seed=0) == held  # same seed, same list
    assert corpora.held_out_ids(ids, seed=1) != held
    split = corpora.make_split({"heval-fix-py": cases}, seed=0)["corpora"]["heval-fix-py"]
    assert set(split["train"]).isdisjoint(split["held_out"])
    assert sorted(split["train"] + split["held_out"]) == sorted(ids)


def test_translations_of_a_task_share_a_side():
    py = [f"Python/{k}" for k in range(164)]
    js = [f"JavaScript/{k}" for k in range(164)]
    held_py = {i.split("/")[1] for i in corpora.held_out_ids(py)}
    held_js = {i.split("/")[1] for i in corpora.held_out_ids(js)}
    assert held_py == held_js


def test_saved_split_equals_the_seeded_function(humanevalpack_dir):
    saved = corpora.load_split()
    split_corpora = {
        name: load_corpus(name, local_dir=humanevalpack_dir) for name in corpora.SPLIT_CORPORA
    }
    fresh = corpora.make_split(split_corpora, seed=saved["seed"], fraction=saved["fraction"])
    assert fresh == saved
    py = saved["corpora"]["heval-fix-py"]
    assert (py["n_train"], py["n_held_out"]) == (131, 33)
    held = set(py["held_out"])
    assert not held & set(py["train"])


def test_an_unknown_split_part_fails_loudly():
    with pytest.raises(ValueError, match="part"):
        corpora.split_cases({"corpora": {}}, "heval-fix-py", [], "test")
