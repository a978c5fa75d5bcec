"""``python -m training.expert``: the command of ``training.learning.expert``, kept at this path."""

if __name__ == "__main__":
    from training.learning.expert import main

    main()
