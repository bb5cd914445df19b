from reconciler.cli import main

main(prog_name="reconcile")
