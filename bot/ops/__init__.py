"""The operations side of ``serve``: who triggers the reindex job, who hears about it, and who reloads the index.

- ``coordinator``: ``ReindexCoordinator``, the one entry point for the schedule, ``/reindex``, the admin page's
  button and the CLI;
- ``summary``: the Indonesian run summary admins get;
- ``subprocess_runner``: ``SubprocessReindex``, each run in a spawned child process at a lower CPU priority;
- ``index_watcher``: ``IndexWatcher``, reloads the serving index when another process published a new version.

These modules take what they run as arguments; ``bot.wiring`` builds them from Settings (they never import it).
"""
