"""DiversityMedQa: medical-exam accuracy by patient gender."""
