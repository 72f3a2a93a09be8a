"""A run that saw files and ingested none of them is not a success (exit status 1)."""

from __future__ import annotations

from ragingest.errors import EXIT_FILES_FAILED, EXIT_OK
from ragingest.pipeline.report import FileResult, RunReport


def test_a_run_that_ingests_none_of_the_files_it_saw_exits_1():
    report = RunReport(files=[FileResult("install.xyz", "unsupported", error="no loader")])
    assert report.exit_code == EXIT_FILES_FAILED
    assert "NOTHING INGESTED: none of the 1 files seen" in report.summary()
    report.files.append(FileResult("guide.md", "ok", chunks=3))
    assert report.exit_code == EXIT_OK
    assert "NOTHING INGESTED" not in report.summary()
    assert RunReport().exit_code == EXIT_OK  # an empty folder: nothing was refused
