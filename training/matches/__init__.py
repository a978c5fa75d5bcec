"""Games between agents and what they leave: duplicate-format evaluation (``evaluate``),
leagues and ratings (``league``), game records (``records``) and their replay (``replay``)."""
