"""``python -m training.serve_bot``: the command of ``training.frontends.serve_bot``, kept at this path."""

if __name__ == "__main__":
    from training.frontends.serve_bot import main

    main()
