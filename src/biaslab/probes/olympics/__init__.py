"""Olympic results probe ("Sports and Women's Sports")."""
