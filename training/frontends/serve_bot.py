"""Serve a bot over the bot protocol: JSON lines on stdin and stdout, one request a line, one
reply a line (``docs/bot-protocol.md``; the protocol is ``training/frontends/protocol.py``).

```
python -m training.serve_bot heuristic                      # any game a start names
python -m training.serve_bot checkpoints/craits --env craits_v0
python -m training.serve_bot ismcts:simulations=200
```

stdout carries only the protocol's replies; anything else goes to stderr. The server
answers until end of input, then exits with status 0; a client that closes the pipe early
ends it quietly, with status 0 too.
"""

from __future__ import annotations

import os
import sys

from envs.spec import discover
from training.common.commands import command_parser
from training.frontends.protocol import SERVED_SPECS, BotServer, serve


def main(argv=None):
    parser = command_parser("serve_bot", __doc__)
    parser.add_argument("agent", help=f"the bot: {SERVED_SPECS}")
    parser.add_argument(
        "--env", choices=list(discover()), help="play this game only (default: the one each start names)"
    )
    args = parser.parse_args(argv)
    try:
        server = BotServer(args.agent, args.env)
    except ValueError as error:
        parser.exit(1, f"error: {error}\n")
    out = sys.stdout
    sys.stdout = sys.stderr  # an agent's stray print must not break the protocol's stream
    try:
        serve(server, sys.stdin.buffer, out)  # bytes: a line that is not UTF-8 gets an error reply
    except KeyboardInterrupt:
        pass
    except BrokenPipeError:
        # The client is gone: nothing left to answer. Point stdout at devnull so that the
        # interpreter's final flush doesn't report the broken pipe either.
        os.dup2(os.open(os.devnull, os.O_WRONLY), out.fileno())
    finally:
        sys.stdout = out


if __name__ == "__main__":
    main()
