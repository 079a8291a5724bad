MODULE VoicedControl
    !
    ! voiced: the control task of the controller side of docs/PROTOCOL.md.
    !
    ! Runs in a second task that never moves (SEMISTATIC, e.g. T_CTRL; needs the
    ! Multitasking option) and owns the CONTROL channel on vdMotionPort + 1:
    !   PING n   -> PONG n (and arms the heartbeat watchdog)
    !   STOP     -> halt "stop", then STOPPED <last_done>
    !   RESUME   -> RESUMED
    !   STATE    -> POSE ..., HALT <reason> while halted, STATUS ...
    !   WATCH ms -> pushes POSE/STATUS every ms while moving, STATUS on changes
    ! Unreadable lines get ERR PARSE/RANGE; the connection stays open.
    !
    ! Halting (VcHalt): set vdHalted and the reason, count vdStopReq up and set
    ! doVoicedStop to 1. The motion task's trap (ISignalDO) stops the arm on its
    ! path at once and ends the move (VoicedMotion.mod, trVoicedStop); the motion
    ! task answers every line it cut, then sets vdStopAck. Only then is STOPPED
    ! sent, so it follows the ERR STOPPED of every cut line, as the protocol says.
    ! The heartbeat watchdog (no PING for vdHeartbeatTimeout once pinged) and a
    ! lost control connection halt the same way (reasons heartbeat, disconnect).
    !
    ! NOT RUN ON A CONTROLLER YET: see docs/RAPID.md for what must be verified.
    ! A software STOP is not a safety function: the safety controller is.
    !

    ! ---- connection: the same declarations as in VoicedMotion.mod ------------
    PERS string vdAddress:="192.168.125.1";
    PERS num vdMotionPort:=1025;
    ! This controller's identity in the greeting ([A-Za-z0-9_], at most 32):
    ! the daemon keeps the saved cell state per identity. One per robot.
    PERS string vdName:="rapid_gofa";
    ! The only client addresses let in, on both channels (all empty: any).
    ! RAPID has no keyed hash, so this is its check (docs/RAPID.md).
    PERS string vdAllowPeer{4}:=["","","",""];

    ! ---- shared with VoicedMotion.mod: identical declarations there ----------
    PERS tooldata vdTool:=[TRUE,[[0,0,0],[1,0,0,0]],[0.001,[0,0,0.001],[1,0,0,0],0,0,0]];
    PERS wobjdata vdWobj:=[FALSE,TRUE,"",[[0,0,0],[1,0,0,0]],[[0,0,0],[1,0,0,0]]];
    PERS bool vdHalted:=FALSE;
    PERS string vdHaltReason:="";
    PERS string vdStopReason:="";
    PERS num vdStopReq:=0;
    PERS num vdStopAck:=0;
    PERS num vdLastDone:=0;
    PERS bool vdBusy:=FALSE;
    PERS num vdStatusCount:=0;
    PERS num vdGripper:=0;
    PERS string vdToolName:="";

    ! ---- settings (s) ---------------------------------------------------------
    ! No PING for this long, once the client has pinged: halt "heartbeat"
    ! (the daemon pings every 0.5 s; the simulator's default is 2.0 s).
    PERS num vdHeartbeatTimeout:=2.0;
    ! Receive timeout of one turn of the loop: the resolution of the watchdog
    ! and of WATCH.
    PERS num vdCtlTick:=0.05;
    ! How long to wait for the motion task to confirm a halt before STOPPED is
    ! sent anyway (the daemon waits 2.0 s for STOPPED).
    PERS num vdStopAckTimeout:=1.0;
    ! The motion task, whose pose POSE reports.
    CONST string VD_ROB_TASK:="T_ROB1";

    ! How long a new client has to answer the greeting (s).
    CONST num VD_HANDSHAKE_TIME:=5;
    CONST num VD_MAX_SEQ:=999999;
    CONST num VD_MAX_LINE:=79;
    CONST num VD_MAX_WATCH:=60000;
    CONST num VD_MAX_TOK:=12;
    CONST string VD_NL:="\0A";
    CONST string VD_DIGITS:="0123456789";
    CONST string VD_HEX:="0123456789abcdef";
    CONST string VD_PRINT_A:=" !""#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNO";
    CONST string VD_PRINT_B:="PQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~";

    LOCAL VAR socketdev sockSrv;
    LOCAL VAR socketdev sockCli;
    LOCAL VAR bool bConnected:=FALSE;
    LOCAL VAR string sPart:="";
    LOCAL VAR bool bOverlong:=FALSE;
    LOCAL VAR string vTok{VD_MAX_TOK};
    LOCAL VAR num vNTok:=0;
    LOCAL VAR string vFailCode:="";
    LOCAL VAR string vFailText:="";
    ! The watchdog: armed by the first PING, disarmed when it fires or the
    ! client goes (simulator.py _watchdog).
    LOCAL VAR bool bArmed:=FALSE;
    LOCAL VAR clock clkPing;
    ! WATCH: period (0 = off), time since the last push, a push owed now.
    LOCAL VAR num nWatchMs:=0;
    LOCAL VAR clock clkWatch;
    LOCAL VAR bool bWatchDue:=FALSE;
    LOCAL VAR num nSeenCount:=-1;
    LOCAL VAR string sSeenStatus:="";
    LOCAL VAR robtarget pLast:=[[0,0,0],[1,0,0,0],[0,0,0,0],[9E9,9E9,9E9,9E9,9E9,9E9]];

    PROC main()
        SetDO doVoicedStop,0;
        SocketClose sockCli;
        SocketClose sockSrv;
        SocketCreate sockSrv;
        SocketBind sockSrv,vdAddress,vdMotionPort+1;
        SocketListen sockSrv;
        bConnected:=FALSE;
        bArmed:=FALSE;
        ClkReset clkWatch;
        ClkStart clkWatch;
        TPWrite "VOICED: control channel on "+vdAddress+":"+NumToStr(vdMotionPort+1,0);
        WHILE TRUE DO
            IF NOT bConnected THEN
                VcAccept;
            ENDIF
            IF bConnected THEN
                VcPoll;
            ENDIF
            VcWatchdog;
            VcWatchPush;
        ENDWHILE
    ENDPROC

    LOCAL PROC VcAccept()
        VAR string peer;
        SocketClose sockCli;
        SocketAccept sockSrv,sockCli\ClientAddress:=peer\Time:=vdCtlTick;
        bConnected:=TRUE;
        sPart:="";
        bOverlong:=FALSE;
        IF NOT VcGreet(peer) THEN
            bConnected:=FALSE;
            SocketClose sockCli;
            RETURN;
        ENDIF
        TPWrite "VOICED: control client "+peer;
    ERROR
        IF ERRNO=ERR_SOCK_TIMEOUT THEN
            SkipWarn;
            RETURN;
        ENDIF
        RAISE;
    ENDPROC

    ! The handshake (simulator.py _admit): greet with no challenge (RAPID has no
    ! keyed hash), let in only an allowed address, and only after its AUTH line.
    ! A second client waits unanswered in the listen queue: one client at a time.
    LOCAL FUNC bool VcGreet(string peer)
        VAR string chunk;
        VcSend "VOICED 1 rapid "+vdName+" -";
        IF NOT VcPeerAllowed(peer) THEN
            ErrWrite\W,"voiced: client refused","Not in vdAllowPeer: "+peer;
            VcErr "AUTH","address not allowed";
            RETURN FALSE;
        ENDIF
        chunk:="";
        SocketReceive sockCli\Str:=chunk\Time:=VD_HANDSHAKE_TIME;
        IF StrLen(chunk)<5 THEN
            chunk:="-----";
        ENDIF
        IF StrPart(chunk,1,5)<>"AUTH " THEN
            VcErr "AUTH","expected AUTH first";
            RETURN FALSE;
        ENDIF
        VcSend "AUTHOK";
        RETURN bConnected;
    ERROR
        SkipWarn;
        RETURN FALSE;
    ENDFUNC

    LOCAL FUNC bool VcPeerAllowed(string peer)
        VAR bool any:=TRUE;
        FOR i FROM 1 TO Dim(vdAllowPeer,1) DO
            IF vdAllowPeer{i}<>"" THEN
                any:=FALSE;
                IF vdAllowPeer{i}=peer THEN
                    RETURN TRUE;
                ENDIF
            ENDIF
        ENDFOR
        RETURN any;
    ENDFUNC

    ! The client closed the connection or it failed: halt "disconnect", whether
    ! or not the watchdog was armed (simulator.py _serve_control).
    LOCAL PROC VcDrop()
        IF bConnected THEN
            bConnected:=FALSE;
            SocketClose sockCli;
            sPart:="";
            bOverlong:=FALSE;
            bArmed:=FALSE;
            TPWrite "VOICED: control client gone";
            VcHalt "disconnect";
        ENDIF
    ENDPROC

    ! One turn: wait up to vdCtlTick for data, handle every complete line.
    LOCAL PROC VcPoll()
        VAR string chunk;
        IF VcRecv(chunk) THEN
            VcFeed chunk;
        ENDIF
    ENDPROC

    LOCAL FUNC bool VcRecv(INOUT string chunk)
        chunk:="";
        SocketReceive sockCli\Str:=chunk\Time:=vdCtlTick;
        RETURN TRUE;
    ERROR
        IF ERRNO=ERR_SOCK_TIMEOUT THEN
            SkipWarn;
            RETURN FALSE;
        ENDIF
        SkipWarn;
        VcDrop;
        RETURN FALSE;
    ENDFUNC

    LOCAL PROC VcFeed(string chunk)
        VAR num len;
        VAR num pos:=1;
        VAR num nl;
        VAR num n;
        len:=StrLen(chunk);
        WHILE pos<=len AND bConnected DO
            nl:=StrFind(chunk,pos,VD_NL);
            n:=nl-pos;
            ! (while bOverlong the rest of a line that is too long is skipped)
            IF NOT bOverlong THEN
                IF StrLen(sPart)+n>VD_MAX_LINE THEN
                    bOverlong:=TRUE;
                ELSEIF n>0 THEN
                    sPart:=sPart+StrPart(chunk,pos,n);
                ENDIF
            ENDIF
            IF nl<=len THEN
                IF bOverlong THEN
                    VcErr "PARSE","longer than 80 bytes with its newline";
                ELSE
                    VcLine sPart;
                ENDIF
                sPart:="";
                bOverlong:=FALSE;
            ENDIF
            pos:=nl+1;
        ENDWHILE
    ENDPROC

    ! robot/protocol/codec.py parse_line on the control channel, then
    ! simulator.py _on_control.
    LOCAL PROC VcLine(string line)
        VAR num bad;
        VAR string kw;
        VAR num nf;
        VAR num value;
        IF StrLen(line)=0 THEN
            VcErr "PARSE","empty line";
            RETURN;
        ENDIF
        bad:=VcBadByte(line);
        IF bad>=0 THEN
            VcErr "PARSE","byte 0x"+VcHex2(bad)+" is not printable ASCII";
            RETURN;
        ENDIF
        IF NOT VcSplit(line) THEN
            VcErr "PARSE","empty field (leading, trailing or double space)";
            RETURN;
        ENDIF
        kw:=vTok{1};
        nf:=vNTok-1;
        TEST kw
        CASE "PING":
            IF nf<>1 THEN
                VcErr "PARSE","PING takes 1 fields, not "+NumToStr(nf,0);
            ELSEIF NOT VcReadInt(vTok{2},0,VD_MAX_SEQ,"count",value) THEN
                VcErr vFailCode,vFailText;
            ELSE
                bArmed:=TRUE;
                ClkReset clkPing;
                ClkStart clkPing;
                VcSend "PONG "+NumToStr(value,0);
            ENDIF
        CASE "STOP":
            IF nf<>0 THEN
                VcErr "PARSE","STOP takes 0 fields, not "+NumToStr(nf,0);
            ELSE
                VcHalt "stop";
                VcSend "STOPPED "+NumToStr(vdLastDone,0);
            ENDIF
        CASE "RESUME":
            IF nf<>0 THEN
                VcErr "PARSE","RESUME takes 0 fields, not "+NumToStr(nf,0);
            ELSE
                ! clears the halt only: nothing that was cut or cleared runs again
                vdHalted:=FALSE;
                vdHaltReason:="";
                VcSend "RESUMED";
            ENDIF
        CASE "STATE":
            IF nf<>0 THEN
                VcErr "PARSE","STATE takes 0 fields, not "+NumToStr(nf,0);
            ELSE
                VcState TRUE;
            ENDIF
        CASE "WATCH":
            IF nf<>1 THEN
                VcErr "PARSE","WATCH takes 1 fields, not "+NumToStr(nf,0);
            ELSEIF NOT VcReadInt(vTok{2},0,VD_MAX_WATCH,"watch period",value) THEN
                VcErr vFailCode,vFailText;
            ELSE
                ! no reply
                nWatchMs:=value;
                bWatchDue:=TRUE;
            ENDIF
        CASE "AUTH":
            VcErr "PARSE","AUTH answers the greeting only";
        CASE "PONG","STOPPED","RESUMED","POSE","HALT","STATUS","ERR","VOICED","AUTHOK":
            VcErr "PARSE",kw+" is not a request";
        DEFAULT:
            VcErr "PARSE","unknown keyword '"+VcClip(kw,20)+"' on the control channel";
        ENDTEST
    ENDPROC

    ! Halt (simcore.halt): the first reason stays until RESUME; the motion task
    ! cuts the line executing and clears its queue, then confirms.
    LOCAL PROC VcHalt(string reason)
        VAR bool late:=FALSE;
        IF NOT vdHalted THEN
            vdHaltReason:=reason;
            vdHalted:=TRUE;
        ENDIF
        vdStopReason:=reason;
        vdStopReq:=vdStopReq+1;
        SetDO doVoicedStop,1;
        WaitUntil vdStopAck=vdStopReq\MaxTime:=vdStopAckTimeout\TimeFlag:=late;
        SetDO doVoicedStop,0;
        IF late THEN
            ErrWrite\W,"voiced: halt not confirmed","T_ROB1 did not confirm the halt in time.";
        ENDIF
    ENDPROC

    ! The heartbeat watchdog (simulator.py _watchdog).
    LOCAL PROC VcWatchdog()
        IF bArmed THEN
            IF ClkRead(clkPing)>vdHeartbeatTimeout THEN
                ! re-armed by the next PING
                bArmed:=FALSE;
                VcHalt "heartbeat";
            ENDIF
        ENDIF
    ENDPROC

    LOCAL FUNC string VcStatus()
        IF vdHalted THEN
            RETURN "halted";
        ELSEIF vdBusy THEN
            RETURN "moving";
        ENDIF
        RETURN "idle";
    ENDFUNC

    ! POSE (optional), HALT while halted, then STATUS: STATUS ends a state report.
    LOCAL PROC VcState(bool withPose)
        VAR string tool;
        IF withPose THEN
            VcSend "POSE "+VcPoseText();
        ENDIF
        IF vdHalted THEN
            VcSend VcFitJoin("HALT",vdHaltReason);
        ENDIF
        tool:=vdToolName;
        IF tool="" THEN
            tool:="-";
        ENDIF
        VcSend "STATUS "+VcStatus()+" "+NumToStr(vdLastDone,0)+" "+VcFmt(vdGripper,1)+" "+tool;
    ENDPROC

    ! The TCP now, as the wire writes a pose (0.1 mm, 4-decimal quaternion).
    LOCAL FUNC string VcPoseText()
        VAR robtarget p;
        p:=VcReadPose();
        RETURN VcFmt(p.trans.x,1)+" "+VcFmt(p.trans.y,1)+" "+VcFmt(p.trans.z,1)+" "
            +VcFmt(p.rot.q1,4)+" "+VcFmt(p.rot.q2,4)+" "+VcFmt(p.rot.q3,4)+" "
            +VcFmt(p.rot.q4,4);
    ENDFUNC

    LOCAL FUNC robtarget VcReadPose()
        pLast:=CRobT(\TaskName:=VD_ROB_TASK\Tool:=vdTool\WObj:=vdWobj);
        RETURN pLast;
    ERROR
        ! keep the last pose read rather than break the state report
        SkipWarn;
        RETURN pLast;
    ENDFUNC

    ! WATCH (simulator.py _status_changed and _watcher): [HALT] STATUS at every
    ! status change, POSE [HALT] STATUS every period while moving.
    LOCAL PROC VcWatchPush()
        VAR string status;
        status:=VcStatus();
        IF status<>sSeenStatus OR vdStatusCount<>nSeenCount THEN
            sSeenStatus:=status;
            nSeenCount:=vdStatusCount;
            IF nWatchMs>0 AND bConnected THEN
                VcState FALSE;
            ENDIF
            bWatchDue:=TRUE;
        ENDIF
        IF nWatchMs>0 AND bConnected AND status="moving" THEN
            IF bWatchDue OR ClkRead(clkWatch)*1000>=nWatchMs THEN
                VcState TRUE;
                ClkReset clkWatch;
                ClkStart clkWatch;
                bWatchDue:=FALSE;
            ENDIF
        ELSE
            bWatchDue:=FALSE;
        ENDIF
    ENDPROC

    LOCAL PROC VcSend(string line)
        IF bConnected THEN
            SocketSend sockCli\Str:=line+VD_NL;
        ENDIF
    ERROR
        SkipWarn;
        VcDrop;
        RETURN;
    ENDPROC

    LOCAL PROC VcErr(string code,string reason)
        VcSend VcFitJoin("ERR "+code,reason);
    ENDPROC

    ! prefix, then as many whole words of `words` as fit in 79 characters.
    LOCAL FUNC string VcFitJoin(string prefix,string words)
        VAR string out;
        VAR string word;
        VAR num len;
        VAR num pos:=1;
        VAR num sp;
        out:=prefix;
        len:=StrLen(words);
        WHILE pos<=len DO
            sp:=StrFind(words,pos," ");
            IF sp>pos THEN
                word:=StrPart(words,pos,sp-pos);
                IF StrLen(out)+1+StrLen(word)>VD_MAX_LINE THEN
                    RETURN out;
                ENDIF
                out:=out+" "+word;
            ENDIF
            pos:=sp+1;
        ENDWHILE
        RETURN out;
    ENDFUNC

    ! d{1,7}, then lo..hi (wire.read_int).
    LOCAL FUNC bool VcReadInt(string tok,num lo,num hi,string what,INOUT num val)
        VAR num len;
        len:=StrLen(tok);
        IF len<1 OR len>7 THEN
            vFailCode:="PARSE";
            vFailText:=what+" is not a whole number";
            RETURN FALSE;
        ENDIF
        IF StrFind(tok,1,VD_DIGITS\NotInSet)<=len THEN
            vFailCode:="PARSE";
            vFailText:=what+" is not a whole number";
            RETURN FALSE;
        ENDIF
        IF NOT StrToVal(tok,val) THEN
            vFailCode:="PARSE";
            vFailText:=what+" is not a whole number";
            RETURN FALSE;
        ENDIF
        IF val<lo OR val>hi THEN
            vFailCode:="RANGE";
            vFailText:=what+" "+tok+" outside "+NumToStr(lo,0)+".."+NumToStr(hi,0);
            RETURN FALSE;
        ENDIF
        RETURN TRUE;
    ENDFUNC

    LOCAL FUNC bool VcSplit(string line)
        VAR num len;
        VAR num pos:=1;
        VAR num sp;
        len:=StrLen(line);
        vNTok:=0;
        WHILE pos<=len DO
            sp:=StrFind(line,pos," ");
            IF sp=pos OR sp=len THEN
                RETURN FALSE;
            ENDIF
            vNTok:=vNTok+1;
            IF vNTok<=VD_MAX_TOK THEN
                vTok{vNTok}:=StrPart(line,pos,sp-pos);
            ENDIF
            pos:=sp+1;
        ENDWHILE
        RETURN vNTok>0;
    ENDFUNC

    LOCAL FUNC num VcBadByte(string line)
        VAR string c;
        ! (called for a line of at least one character)
        FOR k FROM 1 TO StrLen(line) DO
            c:=StrPart(line,k,1);
            IF StrFind(VD_PRINT_A,1,c)>StrLen(VD_PRINT_A)
                AND StrFind(VD_PRINT_B,1,c)>StrLen(VD_PRINT_B) THEN
                RETURN StrToByte(c\Char);
            ENDIF
        ENDFOR
        RETURN -1;
    ENDFUNC

    LOCAL FUNC string VcHex2(num b)
        RETURN StrPart(VD_HEX,(b DIV 16)+1,1)+StrPart(VD_HEX,(b MOD 16)+1,1);
    ENDFUNC

    LOCAL FUNC string VcClip(string s,num n)
        IF StrLen(s)<=n THEN
            RETURN s;
        ENDIF
        RETURN StrPart(s,1,n);
    ENDFUNC

    ! As wire.write_num: at most `dec` decimals, no trailing zeros, no "-0".
    LOCAL FUNC string VcFmt(num value,num dec)
        VAR string s;
        VAR num len;
        s:=NumToStr(value,dec);
        len:=StrLen(s);
        IF StrFind(s,1,".")<=len THEN
            WHILE StrPart(s,len,1)="0" DO
                len:=len-1;
            ENDWHILE
            IF StrPart(s,len,1)="." THEN
                len:=len-1;
            ENDIF
            s:=StrPart(s,1,len);
        ENDIF
        IF s="-0" THEN
            s:="0";
        ENDIF
        RETURN s;
    ENDFUNC
ENDMODULE
