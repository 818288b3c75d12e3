3FROM nvidia/cus://u:pw@h/p.tar.gz
-c https://u:pw@h/c.txt
torch==2.4.1 --config-settings=key=val
machine h login u password p
numpy; rm -rf /
scipy; python_version < "3.10" and (sys_platform == "linuda:11.13#.1-cud Stnna