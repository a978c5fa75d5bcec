"""What every part of ``training`` uses: files written atomically and folder locks
(``files``), strict YAML and the config base (``schema``), and the env handle with the
command-line options that name a game and its table (``games``)."""
