"""``python -m training.evaluate``: the command of ``training.matches.evaluate``, kept at this path."""

if __name__ == "__main__":
    from training.matches.evaluate import main

    main()
