import matplotlib

matplotlib.use("Agg")

from cadlib.book import figures  # noqa: E402
from cadlib.oracle import oracle_program  # noqa: E402
from cadlib.resolver import resolve  # noqa: E402


def test_example_is_a_one_line_fix():
    program = oracle_program(figures.EXAMPLE_DOC, figures.EXAMPLE_GOLD)
    assert [type(op).__name__ for op in program] == ["Copy", "Gen", "Copy"]
    assert resolve(program, figures.EXAMPLE_DOC) == figures.EXAMPLE_GOLD


def test_mechanism_figure_shows_every_output_line():
    fig = figures.mechanism_figure()
    texts = [t.get_text() for t in fig.axes[2].texts]
    for line in figures.EXAMPLE_GOLD.split("\n"):
        if line:
            assert line in texts
    assert len(fig.axes) == 3


def test_save_book_figures(tmp_path):
    (path,) = figures.save_book_figures(str(tmp_path))
    assert (tmp_path / "mechanism.png").stat().st_size > 5_000 and path.endswith(".png")
