"""Many questions at once: `retrac batch` runs each question as a task on Ray (a local Ray on this
machine, or a cluster), with the models behind servers, and writes each result as it ends.

    questions.py  the questions file (the evaluation's format; answers optional)
    results.py    DIR/results.jsonl: one line per question, appended as each ends; what is done
    transfer.py   a finished run copied from a worker's run store into the local one (one writer)
    worker.py     what one Ray worker holds (the app, loaded once) and does for one question
    driver.py     Ray started or joined, workers kept busy, results and runs written by the driver

Ray is an optional extra (`pip install 'retrac-local[scale]'`); only driver.py imports it."""
