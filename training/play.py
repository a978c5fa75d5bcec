"""``python -m training.play``: the command of ``training.frontends.play``, kept at this path."""

if __name__ == "__main__":
    from training.frontends.play import main

    main()
