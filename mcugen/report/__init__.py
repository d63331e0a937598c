"""What a plan and a run say to the user: text and JSON (text.py, with paging.py, patches.py,
partition.py and multiboard.py for those stages), and the HTML page (html/)."""
