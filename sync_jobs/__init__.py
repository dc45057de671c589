"""Sync jobs: crawl, extract, normalise, chunk, and the incremental (re)index job.

Entry points: ``sync_jobs.crawl.crawl_site(config, store)``, ``sync_jobs.extract.extract(url, body, content_type)``
and ``sync_jobs.chunking.chunk_document(doc, …)``. Import them from their modules (the package stays light).
"""

__all__: list[str] = []
