"""Generation: the answer pipeline over a small local LLM with gates, guards, citations and traces."""

from generation.types import Answer, Generation, Generator, Source, Trace

__all__ = ["Answer", "Generation", "Generator", "Source", "Trace"]
