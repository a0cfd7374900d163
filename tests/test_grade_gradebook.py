"""El libro de notas temporal de cada calificación no espera al disco; ningún otro cambia."""

from sqlalchemy import create_engine, text

from course.grading.runner import unsynced


def _synchronous(path) -> int:
    engine = create_engine(f"sqlite:///{path}")
    try:
        with engine.connect() as connection:
            return connection.execute(text("PRAGMA synchronous")).scalar()
    finally:
        engine.dispose()


def test_only_the_temporary_gradebook_skips_the_wait_for_the_disk(tmp_path):
    temporary, instructor = tmp_path / "curso" / "gradebook.db", tmp_path / "gradebook.db"
    temporary.parent.mkdir()
    with unsynced(temporary):
        assert _synchronous(temporary) == 0  # OFF
        assert _synchronous(instructor) != 0
    assert _synchronous(temporary) != 0  # al salir, como siempre
