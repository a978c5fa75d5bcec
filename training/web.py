"""``python -m training.web``: the command of ``training.frontends.web``, kept at this path."""

if __name__ == "__main__":
    from training.frontends.web import main

    main()
