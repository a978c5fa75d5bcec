"""``python -m training.benchmark``: the command of ``training.learning.benchmark``, kept at this path."""

if __name__ == "__main__":
    from training.learning.benchmark import main

    main()
