"""The process around the engine: offline environment, atomic files, the torch thread, caches of user words."""
