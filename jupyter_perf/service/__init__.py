"""What every front door shares (the kernel, the server, the CLI): keeping a run (analyse +
store, ``saving``) and comparing two runs (``comparing``: the store's repeats for noise,
prediction records, the comparison's HTML). Imports model, analysis, render and store."""
