"""The running machinery: the coordinator that connects the stages, the worker processes,
the faults as they are applied (``nemesis``), controlled stepping (``control``) and the
supervision of every process a run starts. Import the module you need; this package
re-exports nothing, so importing one part does not import the others."""
