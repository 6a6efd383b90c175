"""``python -m posecards`` runs the command line."""

from posecards.cli import main

main()
