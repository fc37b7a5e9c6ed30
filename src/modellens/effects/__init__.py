"""Global feature effects: PD / ICE, M-plots, ALE, DALE; interaction statistics."""
