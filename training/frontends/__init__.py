"""Where people and other programs meet the bots: the bot protocol (``protocol``,
``serve_bot``), the web app (``web``, ``web_static``) and a game in the terminal (``play``)."""
