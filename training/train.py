"""``python -m training.train``: the command of ``training.learning.train``, kept at this path."""

if __name__ == "__main__":
    from training.learning.train import main

    main()
