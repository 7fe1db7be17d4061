"""The notebook kernel's front door: the %%perfmeasure / %perfmeasure magics and their verbs,
the live progress display, ``measure()`` and the kernel's last run."""
