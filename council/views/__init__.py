"""What a person reads: the final report, report.html, status and watch."""
