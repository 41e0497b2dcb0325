"""TypeDB adapter (the TypeDB issue). Only this package may import typedb."""
